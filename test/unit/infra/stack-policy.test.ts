import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT, prodContext, synth } from './synth.js';

/**
 * infra/stack/stack-policy.json, the CloudFormation stack policy docs/deploy.md has operators set on each
 * stage's stack after its first deploy. CloudFormation evaluates it on every stack update: an
 * update action is allowed only if some statement allows it and none denies it.
 */
interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Principal: string;
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

const POLICY_PATH = path.join(PROJECT_ROOT, 'infra/stack/stack-policy.json');
const policy = JSON.parse(readFileSync(POLICY_PATH, 'utf8')) as { Statement: PolicyStatement[] };
type UpdateAction = 'Update:Modify' | 'Update:Replace' | 'Update:Delete';

const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);
const like = (pattern: string, value: string) =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(value);

function applies(statement: PolicyStatement, action: UpdateAction, logicalId: string, resourceType: string): boolean {
  if (!list(statement.Action).some((a) => like(a, action))) return false;
  if (!list(statement.Resource).some((r) => r === '*' || like(r, `LogicalResourceId/${logicalId}`))) return false;
  return Object.entries(statement.Condition ?? {}).every(([operator, entries]) =>
    Object.entries(entries).every(([key, expected]) => {
      if (key !== 'ResourceType') throw new Error(`unknown stack-policy condition key ${key}`);
      if (operator === 'StringEquals') return list(expected).includes(resourceType);
      if (operator === 'StringLike') return list(expected).some((p) => like(p, resourceType));
      throw new Error(`unknown stack-policy operator ${operator}`);
    }),
  );
}

function allowed(action: UpdateAction, logicalId: string, resourceType: string): boolean {
  const matching = policy.Statement.filter((s) => applies(s, action, logicalId, resourceType));
  return !matching.some((s) => s.Effect === 'Deny') && matching.some((s) => s.Effect === 'Allow');
}

/** What holds the service's data: replacing one would point the service at a new, empty one. */
const STATEFUL_TYPES = ['AWS::DynamoDB::Table', 'AWS::S3::Bucket'];

/** The key that opens the endpoint secrets stored in the table: a new one would open none of them. */
const isWebhookSecretKey = (id: string, type: string) => type === 'AWS::SecretsManager::Secret' && id.startsWith('WebhookSecretKeySecret');
const kept = (id: string, type: string) => STATEFUL_TYPES.includes(type) || isWebhookSecretKey(id, type);

describe.each([
  ['dev', {}],
  ['prod', prodContext()],
] as const)('the stack policy of the %s stack', (_stage, context) => {
  const resources = (
    synth(context).template.toJSON() as {
      Resources: Record<
        string,
        { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string }
      >;
    }
  ).Resources;

  it('refuses any update that would replace or delete the table or a bucket, and still lets them be modified in place', () => {
    const stateful = Object.entries(resources).filter(([, r]) => STATEFUL_TYPES.includes(r.Type));
    expect(stateful.map(([, r]) => r.Type).sort()).toEqual(['AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::S3::Bucket']);
    for (const [id, { Type }] of stateful) {
      expect({
        id,
        replace: allowed('Update:Replace', id, Type),
        remove: allowed('Update:Delete', id, Type),
        modify: allowed('Update:Modify', id, Type),
      }).toEqual({
        id,
        replace: false,
        remove: false,
        modify: true,
      });
    }
  });

  it('refuses any update that would replace or delete the webhook secret key, which the stack retains like the table', () => {
    const keys = Object.entries(resources).filter(([id, r]) => isWebhookSecretKey(id, r.Type));
    expect(keys).toHaveLength(1);
    for (const [id, resource] of keys) {
      expect({
        id,
        replace: allowed('Update:Replace', id, resource.Type),
        remove: allowed('Update:Delete', id, resource.Type),
        modify: allowed('Update:Modify', id, resource.Type),
        deletionPolicy: resource.DeletionPolicy,
        updateReplacePolicy: resource.UpdateReplacePolicy,
      }).toEqual({ id, replace: false, remove: false, modify: true, deletionPolicy: 'Retain', updateReplacePolicy: 'Retain' });
    }
  });

  it('lets every other resource be modified, replaced or removed as deploys need', () => {
    for (const [id, { Type }] of Object.entries(resources).filter(([rid, r]) => !kept(rid, r.Type))) {
      for (const action of ['Update:Modify', 'Update:Replace', 'Update:Delete'] as const) {
        expect({ id, action, allowed: allowed(action, id, Type) }).toEqual({ id, action, allowed: true });
      }
    }
  });

  // A changed logical id is a delete and a create to CloudFormation (the policy refuses the delete),
  // and a set physical name makes every rename a replacement: neither may happen by accident.
  it('keeps the table and buckets under the logical ids deployed stacks know, with names CloudFormation generates', () => {
    const ids = Object.entries(resources).filter(([, r]) => STATEFUL_TYPES.includes(r.Type));
    expect(ids.map(([id]) => id).sort()).toEqual([
      'DataStoresAccessLogBucket3CCEBB11',
      'DataStoresInvoiceBucket3F8BFC42',
      'DataStoresTable1D9D0D2A',
    ]);
    for (const [, resource] of ids) {
      expect(resource.Properties?.TableName).toBeUndefined();
      expect(resource.Properties?.BucketName).toBeUndefined();
    }
  });
});
