import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { synth } from './synth.js';

/** Runs the AWS Solutions pack the way `cdk synth` does (app.ts registers it as a validation plugin). */
function findings(context: Record<string, unknown>): string[] {
  const { app } = synth(context);
  const report = new AwsSolutionsChecks(app).validateScope(app);
  return report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}`));
}

/** Every acknowledgement in the tree: "construct path: rule id" → reason. */
function acknowledgements(context: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (node: IConstruct) => {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        out[`${node.node.path}: ${id.replace(/^annotation::/i, '')}`] = reason;
      }
    }
    node.node.children.forEach(visit);
  };
  visit(synth(context).stack);
  return out;
}

describe('cdk-nag AwsSolutions', () => {
  it('reports no errors or warnings with the default context', () => {
    expect(findings({})).toEqual([]);
  });

  it('reports no errors or warnings with waf off, no API Gateway account role and every option set', () => {
    expect(
      findings({ waf: 'false', apiGatewayCloudWatchRole: 'false', alarmEmail: 'ops@example.com', invoiceExpirationDays: '3650' }),
    ).toEqual([]);
  });

  it('acknowledges only the reviewed findings, each on the construct it concerns and with a reason', () => {
    const acks = acknowledgements({});
    expect(Object.keys(acks).sort()).toEqual(
      [
        'PartnerCaseApi/Alarms/Topic: AwsSolutions-SNS2',
        'PartnerCaseApi/Api/RestApi: AwsSolutions-APIG2',
        'PartnerCaseApi/Api/RestApi: AwsSolutions-APIG4',
        'PartnerCaseApi/Api/RestApi: AwsSolutions-COG4',
        'PartnerCaseApi/Api/RestApi: AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        'PartnerCaseApi/CreateCases/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi/CreateCases/Role: AwsSolutions-IAM5[Resource::<DataStoresInvoiceBucket3F8BFC42.Arn>/invoices/*]',
        'PartnerCaseApi/CreateUpload/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi/CreateUpload/Role: AwsSolutions-IAM5[Resource::<DataStoresInvoiceBucket3F8BFC42.Arn>/invoices/*]',
        'PartnerCaseApi/DataStores/AccessLogBucket: AwsSolutions-S1',
        'PartnerCaseApi/GetCase/Role: AwsSolutions-IAM5[Resource::*]',
      ].sort(),
    );
    for (const reason of Object.values(acks)) expect(reason.length).toBeGreaterThan(40);
  });

  it('switching WAF off is acknowledged on the stage, not hidden', () => {
    expect(Object.keys(acknowledgements({ waf: 'false' }))).toContain('PartnerCaseApi/Api/RestApi/DeploymentStage.prod: AwsSolutions-APIG3');
  });
});
