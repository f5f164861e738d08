/**
 * What the domain needs of a logger: warnings and errors with structured fields. The process's
 * Powertools logger (`lib/runtime/logger.ts`) satisfies it; the domain never imports that module,
 * so use cases stay free of environment and runtime concerns and tests can capture what they log.
 */
export interface Log {
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}
