/**
 * The layering of the code, enforced by dependency-cruiser in .ci/run (`npm run deps`).
 * docs/design.md draws it. In short: the domain (lib/cases, lib/uploads, lib/accounts, lib/auth,
 * lib/webhooks and the pure top-level modules they use) depends on nothing but zod, Node's own
 * modules and pure libraries (standardwebhooks), never on a platform package;
 * the HTTP layer and the adapters depend on the domain, never on each other; lib/ never reaches
 * out to the deployables (functions/, infra/) or to bench/ and test/; tests never import bench/.
 *
 * infra/ is split by audience: infra/stack (the CDK app, deployed), infra/local (the local world:
 * npm start, its stores and gates, npm run invoke), infra/ops (operator tools run against a
 * deployed table) and infra/contract (what the stack and the local world must agree on: route
 * table, gateway responses, stack settings, OpenAPI). Arrows run from an audience to the contract
 * or to product code (lib/, functions/), never between audiences, and the contract loads no CDK.
 */
const DOMAIN = '^lib/(cases|uploads|accounts|auth|webhooks)/';
/** The top-level lib modules (errors.ts, log.ts, random-id.ts): pure, imported by the domain. */
const PURE_TOP = '^lib/[^/]+\\.ts$';
const CDK_PACKAGES = '(^|/)node_modules/(aws-cdk-lib|constructs|cdk-nag)(/|$)';
/** The one module of the local world operator tools may use: where the local stack listens. */
const PORT_DISCOVERY = '^infra/local/local-ports\\.ts$';
const PLATFORM_PACKAGES =
  '(^|/)node_modules/(@aws-sdk|@smithy|@middy|@aws-lambda-powertools|@types/aws-lambda|aws-lambda|aws-cdk-lib|constructs)(/|$)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles hide the direction of a dependency.',
      from: {},
      to: { circular: true },
    },
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
      name: 'product-code-loads-no-cdk',
      severity: 'error',
      comment: 'lib/ and functions/ run in Lambda: the CDK is a deploy-time tool.',
      from: { path: '^(lib|functions)/' },
      to: { path: CDK_PACKAGES },
    },
    {
      name: 'stack-knows-no-local-world',
      severity: 'error',
      comment:
        'The CDK stack builds what is deployed; the local stand-ins, servers and tools are not part of it. ' +
        'Share through infra/contract.',
      from: { path: '^infra/stack/' },
      to: { path: '^infra/(local|ops)/' },
    },
    {
      name: 'local-world-knows-no-stack',
      severity: 'error',
      comment: 'npm start and npm run invoke never import the CDK code: what they share with the stack is in ' + 'infra/contract.',
      from: { path: '^infra/local/' },
      to: { path: '^infra/(stack|ops)/' },
    },
    {
      name: 'local-world-loads-no-cdk',
      severity: 'error',
      comment: 'No module of the local world reaches aws-cdk-lib, even through another module: it costs start-up time.',
      from: { path: '^infra/local/' },
      to: { path: CDK_PACKAGES, reachable: true },
    },
    {
      name: 'contract-is-plain-data',
      severity: 'error',
      comment: 'The contract is read by the stack and by the local world alike: it imports neither of them, nor the CDK.',
      from: { path: '^infra/contract/' },
      to: { path: ['^infra/(stack|local|ops)/', CDK_PACKAGES] },
    },
    {
      name: 'ops-tools-know-no-cdk-or-local-servers',
      severity: 'error',
      comment:
        'admin and smoke run against production: no CDK code and no local server or store launcher, ' + 'only the local port discovery.',
      from: { path: '^infra/ops/' },
      to: { path: ['^infra/(stack|local)/', CDK_PACKAGES], pathNot: PORT_DISCOVERY },
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
