/**
 * The layering of the code, enforced by dependency-cruiser in .ci/run (`npm run deps`).
 * docs/design.md draws it. In short: the domain (lib/cases, lib/uploads, lib/accounts, lib/auth
 * and the pure top-level modules they use) depends on nothing but zod and Node's own modules;
 * the HTTP layer and the adapters depend on the domain, never on each other; lib/ never reaches
 * out to the deployables (functions/, infra/) or to bench/ and test/; tests never import bench/.
 */
const DOMAIN = '^lib/(cases|uploads|accounts|auth)/';
/** The top-level lib modules (errors.ts, log.ts, random-id.ts): pure, imported by the domain. */
const PURE_TOP = '^lib/[^/]+\\.ts$';
const PLATFORM_PACKAGES = '(^|/)node_modules/(@aws-sdk|@smithy|@middy|@aws-lambda-powertools|@types/aws-lambda|aws-lambda|aws-cdk-lib|constructs)(/|$)';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles hide the direction of a dependency.', from: {}, to: { circular: true } },
    {
      name: 'domain-is-platform-free',
      severity: 'error',
      comment: 'Use cases and rules take plain data and ports: no AWS SDK, middy, Lambda types, Powertools or CDK.',
      from: { path: [DOMAIN, PURE_TOP] },
      to: { path: PLATFORM_PACKAGES },
    },
    {
      name: 'domain-knows-no-outer-layer',
      severity: 'error',
      comment: 'The domain declares ports; it never imports the HTTP layer, an adapter, or runtime config/logging/metrics.',
      from: { path: [DOMAIN, PURE_TOP] },
      to: { path: '^lib/(http|adapters|runtime)/' },
    },
    {
      name: 'http-knows-no-adapter',
      severity: 'error',
      comment: 'The HTTP layer reaches storage only through the ports handed to it.',
      from: { path: '^lib/http/' },
      to: { path: '^lib/adapters/' },
    },
    {
      name: 'adapters-know-no-http',
      severity: 'error',
      comment: 'Adapters implement ports; HTTP statuses and events are not their business.',
      from: { path: '^lib/adapters/' },
      to: { path: '^lib/http/' },
    },
    {
      name: 'lib-never-imports-deployables',
      severity: 'error',
      comment: 'lib/ is imported by functions/, infra/, bench/ and test/, never the other way round.',
      from: { path: '^lib/' },
      to: { path: '^(functions|infra|bench|test)/' },
    },
    {
      name: 'functions-are-thin',
      severity: 'error',
      comment: 'A handler module wires lib/; it does not import the stack, the bench or tests.',
      from: { path: '^functions/' },
      to: { path: '^(infra|bench|test)/' },
    },
    {
      name: 'tests-never-import-bench',
      severity: 'error',
      comment: 'Shared test helpers live in test/support; the bench may import them, not the reverse.',
      from: { path: '^test/' },
      to: { path: '^bench/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a domain module must not even name an AWS or Lambda type.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve package subpaths through their `exports` maps as TypeScript does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['types', 'import', 'require', 'node', 'default'] },
    // Not `exclude`: that would drop the edges to packages too, and the platform rule with them.
    exclude: { path: '(^|/)(cdk\\.out|\\.local|coverage)/' },
  },
};
