import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { prodContext, synth } from './synth.js';

/**
 * Runs the AWS Solutions pack the way `cdk synth` does (app.ts registers it as a validation
 * plugin). With `ignoreAcknowledgements`, every finding is reported, acknowledged or not: what an
 * acknowledgement must match so that it is not stale.
 */
function findings(context: Record<string, unknown>, ignoreAcknowledgements = false): { rule: string; path: string; severity: string }[] {
  const { app } = synth(context);
  const pack = new AwsSolutionsChecks(app);
  // cdk-nag has no switch for this; its (private) acknowledgement lookup is replaced for this run.
  if (ignoreAcknowledgements) (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  const report = pack.validateScope(app);
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => ({ rule: v.ruleName, path: r.constructPath ?? '', severity: v.severity ?? '' })),
  );
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

const CONTEXTS: [string, Record<string, unknown>][] = [
  ['dev with the cdk.json defaults', {}],
  [
    'dev with waf off, no API Gateway account role and every option set',
    { waf: 'false', apiGatewayCloudWatchRole: 'false', alarmEmail: 'ops@example.com', invoiceExpirationDays: '3650' },
  ],
  [
    'prod with a custom domain',
    prodContext({
      domainName: 'api.example.com',
      certificateArn: 'arn:aws:acm:eu-west-2:222222222222:certificate/0f3a8c1e-1234-4abc-9def-123456789abc',
    }),
  ],
];

describe('cdk-nag AwsSolutions', () => {
  it.each(CONTEXTS)('reports no errors or warnings for %s', (_, context) => {
    expect(findings(context).map((f) => `${f.severity} ${f.rule} at ${f.path}`)).toEqual([]);
  });

  it.each(CONTEXTS)('has no stale acknowledgement for %s: each one matches a finding on its construct', (_, context) => {
    const all = findings(context, true);
    for (const key of Object.keys(acknowledgements(context))) {
      const [path, rule] = key.split(': ') as [string, string];
      expect({ key, matched: all.some((f) => f.rule === rule && (f.path === path || f.path.startsWith(`${path}/`))) }).toEqual({
        key,
        matched: true,
      });
    }
  });

  it('acknowledges only the reviewed findings, each on the construct it concerns and with a reason', () => {
    const acks = acknowledgements({});
    expect(Object.keys(acks).sort()).toEqual(
      [
        'PartnerCaseApi-dev/Api/RestApi: AwsSolutions-APIG2',
        'PartnerCaseApi-dev/Api/RestApi: AwsSolutions-APIG4',
        'PartnerCaseApi-dev/Api/RestApi: AwsSolutions-COG4',
        'PartnerCaseApi-dev/Api/RestApi: AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        'PartnerCaseApi-dev/ConfirmCases/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/TestConfirmCase/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/TestApplyRecoveryUpdate/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/CreateCases/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/CreateCases/Role: AwsSolutions-IAM5[Resource::<DataStoresInvoiceBucket3F8BFC42.Arn>/invoices/*]',
        'PartnerCaseApi-dev/CreateCases/Role: AwsSolutions-IAM5[Resource::<DataStoresInvoiceBucket3F8BFC42.Arn>/test-invoices/*]',
        'PartnerCaseApi-dev/CreateUpload/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/CreateUpload/Role: AwsSolutions-IAM5[Resource::<DataStoresInvoiceBucket3F8BFC42.Arn>/invoices/*]',
        'PartnerCaseApi-dev/CreateUpload/Role: AwsSolutions-IAM5[Resource::<DataStoresInvoiceBucket3F8BFC42.Arn>/test-invoices/*]',
        'PartnerCaseApi-dev/CursorSecret/Secret: AwsSolutions-SMG4',
        'PartnerCaseApi-dev/DebtorVerifier/FailedStreamRecords: AwsSolutions-SQS3',
        'PartnerCaseApi-dev/DebtorVerifier/RegistryKey: AwsSolutions-SMG4',
        'PartnerCaseApi-dev/DebtorVerifier/Worker/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/RecordUpload/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/RecordUploadDelivery/FailedEvents: AwsSolutions-SQS3',
        'PartnerCaseApi-dev/WebhookDelivery/Deliver/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/WebhookDelivery/FailedStreamRecords: AwsSolutions-SQS3',
        'PartnerCaseApi-dev/WebhookDelivery/FanOut/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/WebhookDelivery/Plan/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/WebhookDelivery/Sweep/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/WebhookDelivery/SweepScheduleRole: AwsSolutions-IAM5[Resource::<WebhookDeliverySweepFunctionFCA4FF9E.Arn>:*]',
        'PartnerCaseApi-dev/BucketNotificationsHandler050a0587b7544547bf325f094a3db834/Role: AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'PartnerCaseApi-dev/GetCase/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/ListCases/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/ListEvents/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/GetEvent/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/WithdrawCase/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/RecordPayment/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/ListCasePayments/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/ApplyRecoveryUpdates/Role: AwsSolutions-IAM5[Resource::*]',
        // Every function's X-Ray grant (its own role), and the webhook sealing key, not rotated for the reason given.
        'PartnerCaseApi-dev/CreateWebhookEndpoint/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/ListWebhookDeliveries/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/ListWebhookEndpoints/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/PingWebhookEndpoint/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/GetWebhookEndpoint/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/UpdateWebhookEndpoint/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/DeleteWebhookEndpoint/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/RedeliverWebhookEvent/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/RotateWebhookEndpointSecret/Role: AwsSolutions-IAM5[Resource::*]',
        'PartnerCaseApi-dev/WebhookSecretKey/Secret: AwsSolutions-SMG4',
      ].sort(),
    );
    for (const reason of Object.values(acks)) expect(reason.length).toBeGreaterThan(40);
  });

  it('switching WAF off is acknowledged on the stage, not hidden', () => {
    expect(Object.keys(acknowledgements({ waf: 'false' }))).toContain(
      'PartnerCaseApi-dev/Api/RestApi/DeploymentStage.dev: AwsSolutions-APIG3',
    );
  });
});
