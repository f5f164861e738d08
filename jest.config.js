import { availableParallelism } from 'node:os';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

// Jest runs the TypeScript sources through @swc/jest as CommonJS. middy 6 is ESM-only, so it is
// transformed too (transformIgnorePatterns), and the `.js` suffixes that nodenext resolution
// requires in our imports are mapped back to the `.ts` files.
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  },
];

const common = {
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

// The CDK synth tests (they load aws-cdk-lib and synthesise the stack: most of a unit run's time) form
// their own project, `infra`, so `--selectProjects unit` stays fast. Selected by path so the files stay
// where they are: everything under test/unit/infra except the files named here, which synthesise
// nothing, plus the gateway parity test, which compares the synthesised API with the local routes.
const INFRA_WITHOUT_SYNTH = '(match-filter-pattern|deploy-docs)\\.test\\.ts$';
const INFRA_TESTS = ['/test/unit/infra/(?!' + INFRA_WITHOUT_SYNTH + ')[^/]*\\.test\\.ts$', '/test/unit/gateway-parity\\.test\\.ts$'];

// Jest leaves one core to itself: on a 2-core machine that is one worker. A run of the in-process
// tiers alone (unit, infra) takes a second one: their slowest files mostly wait on real sockets and
// DNS timeouts, which a second worker overlaps. Runs with the Java-backed tiers keep jest's default.
const flag = process.argv.findIndex((arg) => arg === '--selectProjects' || arg.startsWith('--selectProjects='));
const selected =
  flag === -1
    ? []
    : process.argv[flag].includes('=')
      ? [process.argv[flag].split('=')[1]]
      : process.argv.slice(flag + 1).filter((arg, i, rest) => rest.slice(0, i + 1).every((a) => !a.startsWith('-')));
const inProcessOnly = selected.length > 0 && selected.every((name) => name === 'unit' || name === 'infra');

export default {
  ...(inProcessOnly ? { maxWorkers: Math.max(2, availableParallelism() - 1) } : {}),
  // The adversarial project's summary (fuzz runs, faults, invariants, tenancy cells, auth cases).
  reporters: ['default', '<rootDir>/test/adversarial/summary-reporter.mjs'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...INFRA_TESTS],
    },
    {
      ...common,
      displayName: 'infra',
      testRegex: INFRA_TESTS,
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-timeout.ts'],
    },
    {
      ...common,
      displayName: 'adversarial',
      testMatch: ['<rootDir>/test/adversarial/**/*.test.ts'],
      globalSetup: '<rootDir>/test/adversarial/global-setup.ts',
      globalTeardown: '<rootDir>/test/adversarial/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/adversarial/timeout.ts'],
    },
  ],
};
