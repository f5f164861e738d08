import { App } from 'aws-cdk-lib';
import { readStackConfig } from '../../../infra/contract/stack-config.js';
import { cdkJsonContext, prodContext, synth, TEST_PROD_STAGE } from './synth.js';

describe('deployment stages in the synthesised app', () => {
  it('the CDK app refuses to build anything without -c stage', () => {
    const app = new App({ context: cdkJsonContext() });
    expect(() => readStackConfig(app.node)).toThrow(/"stage" is required: pass -c stage=dev or -c stage=prod/);
  });

  it('the dev stack is named for its stage, pinned to the dev account and region, and deletable', () => {
    const { stack, app } = synth();
    const dev = cdkJsonContext().stages as { dev: { account: string; region: string } };
    expect(stack.stackName).toBe('PartnerCaseApi-dev');
    expect({ account: stack.account, region: stack.region }).toEqual(dev.dev);
    expect(stack.terminationProtection).toBe(false);
    const artifact = app.synth().getStackByName('PartnerCaseApi-dev');
    expect(artifact.environment).toMatchObject({ account: dev.dev.account, region: dev.dev.region });
  });

  it('the prod stack is named for its stage, pinned to the prod account and region, and termination-protected', () => {
    const { stack, app } = synth(prodContext());
    expect(stack.stackName).toBe('PartnerCaseApi-prod');
    expect({ account: stack.account, region: stack.region }).toEqual(TEST_PROD_STAGE);
    expect(stack.terminationProtection).toBe(true);
    expect(app.synth().getStackByName('PartnerCaseApi-prod').terminationProtection).toBe(true);
  });

  it('prod subscribes its alarm e-mail to the alarm topic', () => {
    const { template } = synth(prodContext({ alarmEmail: 'oncall@example.com' }));
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  });

  it('every resource is tagged with its stage', () => {
    const { template } = synth(prodContext());
    const table = Object.values(template.findResources('AWS::DynamoDB::Table'))[0] as {
      Properties: { Tags: { Key: string; Value: string }[] };
    };
    expect(table.Properties.Tags).toContainEqual({ Key: 'stage', Value: 'prod' });
  });

  // A first create that fails rolls back but keeps every retained resource; the retry is a new
  // stack of the same name, so a kept resource with a fixed name would fail it ("already exists").
  it.each([
    ['dev', {}],
    ['prod', prodContext()],
  ] as const)('a failed first %s deploy can be retried: nothing it keeps has a name a second creation would reuse', (_stage, context) => {
    const resources = (
      synth(context).template.toJSON() as { Resources: Record<string, { DeletionPolicy?: string; Properties?: Record<string, unknown> }> }
    ).Resources;
    const createdWithTheStack = new Set(Object.keys(resources).filter((id) => !String(resources[id]?.DeletionPolicy).startsWith('Retain')));
    const kept = Object.entries(resources).filter(([, r]) => String(r.DeletionPolicy).startsWith('Retain'));
    expect(kept.length).toBeGreaterThan(0);
    for (const [id, resource] of kept) {
      for (const [property, value] of Object.entries(resource.Properties ?? {}).filter(([key]) => /Name$/.test(key))) {
        // Unique per creation: it names the stack id, or a resource created (and deleted) with the stack.
        const refs = [...JSON.stringify(value).matchAll(/"Ref":"([^"]+)"/g)].map((m) => m[1] as string);
        const unique = refs.some((ref) => ref === 'AWS::StackId' || createdWithTheStack.has(ref));
        expect({ id, property, value, unique }).toEqual({ id, property, value, unique: true });
      }
    }
  });
});
