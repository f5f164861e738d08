import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PartnerCaseApiStack } from './partner-case-api-stack.js';
import { readStackConfig } from '../contract/stack-config.js';

/**
 * The CDK app (`cdk.json`: `npx tsx infra/stack/app.ts`). Every command names a stage
 * (`-c stage=dev|prod`); the stage's account and region are pinned in `cdk.json`, so credentials
 * for another account make `cdk deploy` stop instead of deploying there. Settings come from CDK
 * context; see infra/contract/stack-config.ts and docs/deploy.md. cdk-nag's AWS Solutions pack runs as a validation
 * plugin: any unacknowledged finding fails `cdk synth` and `cdk deploy`.
 */
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const app = new App();
const config = readStackConfig(app.node);

new PartnerCaseApiStack(app, config.stackName, {
  stackName: config.stackName,
  config,
  projectRoot,
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));

app.synth();
