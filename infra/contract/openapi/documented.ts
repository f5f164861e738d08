import type { z } from 'zod';

type Shape = Record<string, z.ZodType>;

/**
 * Adds JSON Schema keywords and descriptions to fields of a handler's schema, by name only. The
 * request schemas are the handlers' own; refinements (lengths counted in code points, "not blank",
 * real dates, patterns checked in code) cannot be seen by the generator, so the matching keywords
 * are stated here, field by field, and tests hold them to the handlers at their boundaries.
 */
export function documented<S extends Shape>(shape: S, docs: { [K in keyof S]?: Record<string, unknown> }): Shape {
  const out: Shape = {};
  for (const [name, docsOfField] of Object.entries(docs)) {
    const field = shape[name];
    if (!field) throw new Error(`documented(): no field "${name}" in the schema`);
    out[name] = field.meta(docsOfField as Record<string, unknown>);
  }
  return out;
}
