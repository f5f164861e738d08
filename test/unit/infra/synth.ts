import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PartnerCaseApiStack } from '../../../infra/stack/partner-case-api-stack.js';
import { readStackConfig } from '../../../infra/contract/stack-config.js';
import { API_FUNCTION_IDS, API_FUNCTIONS } from '../../../infra/contract/route-table.js';
import type { ApiFunction } from '../../../infra/stack/api-function.js';

/**
 * Synthesises the stack the way `cdk synth` does (same cdk.json context: feature flags and
 * defaults) but without bundling, so a synth takes well under a second. Results are cached per
 * context within a test file.
 */
export const PROJECT_ROOT = path.resolve(__dirname, '../../..');

export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  return cdkJson.context;
}

export interface Synthesised {
  app: App;
  stack: PartnerCaseApiStack;
  template: Template;
}

const cache = new Map<string, Synthesised>();

/** A prod stage entry for tests (cdk.json has none until the real account is filled in). */
export const TEST_PROD_STAGE = { account: '222222222222', region: 'eu-west-2' };

/** Context for a prod synth: the test prod entry next to cdk.json's stages, and an alarm subscriber. */
export function prodContext(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const stages = cdkJsonContext().stages as Record<string, unknown>;
  return { stage: 'prod', stages: { ...stages, prod: TEST_PROD_STAGE }, alarmEmail: 'oncall@example.com', ...extra };
}

/** Synthesises with cdk.json's context, `stage=dev` unless the context names another, and `context` on top. */
export function synth(context: Record<string, unknown> = {}): Synthesised {
  const key = JSON.stringify(context);
  const cached = cache.get(key);
  if (cached) return cached;
  const app = new App({
    context: { ...cdkJsonContext(), stage: 'dev', ...context, 'aws:cdk:bundling-stacks': [] },
    // CDK's built-in CloudFormation rule validation still runs in `npm run synth`; here it would
    // add about 3 s to every test file.
    builtinCloudFormationValidation: false,
  });
  const config = readStackConfig(app.node);
  const stack = new PartnerCaseApiStack(app, config.stackName, {
    stackName: config.stackName,
    config,
    projectRoot: PROJECT_ROOT,
  });
  const result = { app, stack, template: Template.fromStack(stack) };
  cache.set(key, result);
  return result;
}

export type Resource = { Type: string; Properties: Record<string, unknown>; [k: string]: unknown };

export function resourcesOfType(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

/** The one resource of a type, failing when there is not exactly one. */
export function onlyResource(template: Template, type: string): Resource {
  const found = Object.values(resourcesOfType(template, type));
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0] as Resource;
}

/** The webhook routes' functions, by construct id (infra/contract/routes/webhook-endpoints.ts). */
export type WebhookFunctionId =
  | 'CreateWebhookEndpoint'
  | 'ListWebhookEndpoints'
  | 'GetWebhookEndpoint'
  | 'UpdateWebhookEndpoint'
  | 'DeleteWebhookEndpoint'
  | 'RotateWebhookEndpointSecret'
  | 'PingWebhookEndpoint'
  | 'RedeliverWebhookEvent'
  | 'ListWebhookDeliveries';

export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, unknown>;
}

export const actionsOf = (statement: Statement): string[] => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);

/** Every policy statement attached to the role of the function whose construct id is given (an API function's is its manifest's). */
export function statementsOfFunction(synthesised: Synthesised, functionId: string): Statement[] {
  const { stack, template } = synthesised;
  const workers: Record<string, ApiFunction> = {
    RecordUpload: stack.recordUpload,
    WebhookFanOut: stack.webhookDelivery.fanOut,
    WebhookPlan: stack.webhookDelivery.plan,
    WebhookDeliver: stack.webhookDelivery.deliver,
    WebhookSweep: stack.webhookDelivery.sweep,
    DebtorVerifierWorker: stack.debtorVerifier.worker,
  };
  const api = API_FUNCTION_IDS.find((id) => API_FUNCTIONS[id].constructId === functionId);
  const fn = api ? stack.functions[api] : workers[functionId];
  if (!fn) throw new Error(`no function ${functionId}`);
  const roleLogicalId = stack.resolve(stack.getLogicalId(fn.role.node.defaultChild as CfnElement)) as string;
  const role = resourcesOfType(template, 'AWS::IAM::Role')[roleLogicalId];
  if (!role) throw new Error(`no role for ${functionId}`);
  const inline = ((role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
    (p) => p.PolicyDocument.Statement,
  );
  const attached = Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleLogicalId))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  return [...inline, ...attached];
}

/** The actions a function's role is granted, sorted and deduplicated. */
export function actionsOfFunction(synthesised: Synthesised, functionId: string): string[] {
  return [...new Set(statementsOfFunction(synthesised, functionId).flatMap(actionsOf))].sort();
}

/** Logs and X-Ray actions every function holds for its own log group and tracing. */
export const PLATFORM_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

export const dataActions = (actions: string[]) => actions.filter((a) => !PLATFORM_ACTIONS.includes(a));
