import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { API_FUNCTION_IDS } from '../../../infra/contract/routes/index.js';
import { REJECTION_CODES } from '../../../lib/cases/case-input.js';
import { CASE_METRIC_NAMES } from '../../../infra/stack/service-metrics.js';
import { WORKLOAD_ALARMS } from '../../../infra/stack/alarms.js';
import { SERVICE_METRICS } from '../../../infra/contract/stack-config.js';
import { accessLogFormat } from '../../../infra/stack/http-api.js';
import { onlyResource, PROJECT_ROOT, resourcesOfType, synth, type Resource } from './synth.js';

type MetricQuery = {
  Id: string;
  Expression?: string;
  MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] }; Stat: string };
};

const alarmNamed = (id: string, context: Record<string, unknown> = {}): Resource => {
  const found = alarms(context).filter((a) => a.Properties.AlarmName === `PartnerCaseApi-dev-${id}`);
  if (found.length !== 1) throw new Error(`expected one alarm ${id}, found ${found.length}`);
  return found[0] as Resource;
};

function alarms(context: Record<string, unknown> = {}): Resource[] {
  return Object.values(resourcesOfType(synth(context).template, 'AWS::CloudWatch::Alarm'));
}

/** The metric names an alarm watches (one for a plain alarm, several for metric math). */
function metricNames(alarm: Resource): string[] {
  if (alarm.Properties.MetricName) return [alarm.Properties.MetricName as string];
  return ((alarm.Properties.Metrics ?? []) as MetricQuery[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
}

const countByMetric = (list: Resource[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const alarm of list) for (const name of new Set(metricNames(alarm))) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
};

describe('alarms', () => {
  it('watch the API, failed case writes, WAF blocks, every function, stream mapping and queue, the upload records\u2019 delivery and the table', () => {
    expect(countByMetric(alarms())).toEqual({
      '5XXError': 1,
      '4XXError': 1,
      Count: 1,
      Latency: 1,
      CasesTemporaryFailure: 1,
      CaseWriteOutcomeUnknown: 1,
      // A case whose half-year has no reference rate, created or read.
      ReferenceRateMissing: 1,
      BlockedRequests: 1,
      // Every API function of the route manifest, record-upload (with its dropped events, lost events and queue depth),
      // the debtor verifier, the webhook fan-out, the webhook planning worker, the webhook delivery function and its sweeper.
      Errors: API_FUNCTION_IDS.length + 6,
      Throttles: API_FUNCTION_IDS.length + 6,
      // The two functions fed by the table's stream: the debtor verifier and the webhook fan-out.
      IteratorAge: 2,
      AsyncEventsDropped: 1,
      DestinationDeliveryFailures: 1,
      // At the first message: record-upload's on-failure queue; the debtor verifier's on-failure queue and retry dead
      // letters; the webhook fan-out's on-failure queue, the planning dead letters and the delivery dead letters. A
      // backlog on each consumed queue: the verifier's retry queue, the two planning queues and the delivery lanes.
      ApproximateNumberOfMessagesVisible: 13,
      // In flight near SQS's quota, on each queue.
      ApproximateNumberOfMessagesNotVisible: 13,
      // The oldest message of each delivery lane, of each planning queue and of the verifier's retries.
      ApproximateAgeOfOldestMessage: 7,
      // The webhook failure rate (failed attempts over all attempts) and the give-up rate (given up over finished deliveries).
      WebhookDelivered: 2,
      WebhookAttemptFailed: 1,
      WebhookDeliveryGivenUp: 1,
      WebhookSweepFailures: 1,
      // The debtor verifier: a case still PENDING after 24 h.
      DebtorVerificationExhausted: 1,
      // The stream consumers never invoked while cases are created: the fan-out and the verifier; the sweeper never invoked.
      CasesCreated: 2,
      Invocations: 3,
      ThrottledRequests: 1,
      SystemErrors: 1,
    });
  });

  it.each([
    ['CasesTemporaryFailure', 'CasesTemporaryFailure'],
    ['CaseWriteOutcomeUnknown', 'CaseWriteOutcomeUnknown'],
  ])('%s pages at the first case in five minutes, reading the service metric with its service dimension', (id, metricName) => {
    expect(alarmNamed(id).Properties).toMatchObject({
      Namespace: 'PartnerCaseApi',
      MetricName: metricName,
      Dimensions: [{ Name: 'service', Value: 'partner-case-api' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('ReferenceRateMissing pages at the first case without a reference rate in an hour, and no data is not breaching', () => {
    expect(alarmNamed('ReferenceRateMissing').Properties).toMatchObject({
      Namespace: 'PartnerCaseApi',
      MetricName: 'ReferenceRateMissing',
      Dimensions: [{ Name: 'service', Value: 'partner-case-api' }],
      Statistic: 'Sum',
      Period: 3600,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(alarmNamed('ReferenceRateMissing').Properties.AlarmDescription).toContain('Adding a reference rate');
  });

  it('the service metrics are read with the namespace and service name the functions are given', () => {
    // Ours, not CDK's bucket-notification custom resource.
    const environment = Object.entries(resourcesOfType(synth().template, 'AWS::Lambda::Function'))
      .filter(([id]) => !id.startsWith('BucketNotificationsHandler'))
      .map(([, f]) => (f.Properties.Environment as { Variables: Record<string, string> }).Variables);
    for (const variables of environment) {
      expect(variables).toMatchObject({
        POWERTOOLS_METRICS_NAMESPACE: SERVICE_METRICS.namespace,
        POWERTOOLS_SERVICE_NAME: SERVICE_METRICS.service,
      });
    }
  });

  it('every case metric the alarms and the dashboard read is one create-cases publishes', () => {
    const source = readFileSync(path.join(PROJECT_ROOT, 'functions/create-cases.ts'), 'utf8');
    const published = new Set([...source.matchAll(/addMetric\('(\w+)'/g)].map((m) => m[1]));
    for (const name of Object.values(CASE_METRIC_NAMES)) {
      expect({ name, published: published.has(name) }).toEqual({ name, published: true });
    }
  });

  it('the 4XX alarm watches the share of 4XX answers, only in periods with enough requests to mean something', () => {
    const alarm = alarmNamed('ApiClientErrorRate');
    expect(alarm.Properties).toMatchObject({
      Threshold: 0.25,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    const queries = alarm.Properties.Metrics as MetricQuery[];
    const expression = queries.find((q) => q.Expression)?.Expression;
    expect(expression).toBe('IF(FILL(requests, 0) >= 50, FILL(clientErrors, 0) / FILL(requests, 0), 0)');
    const byId = Object.fromEntries(queries.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat]));
    expect(byId.clientErrors).toMatchObject({ Metric: { MetricName: '4XXError', Namespace: 'AWS/ApiGateway' }, Stat: 'Sum' });
    expect(byId.requests).toMatchObject({ Metric: { MetricName: 'Count', Namespace: 'AWS/ApiGateway' }, Stat: 'Sum' });
    expect(alarmNamed('ApiClientErrorRate', { alarmClientErrorRate: '0.1' }).Properties.Threshold).toBe(0.1);
  });

  it('the WAF alarm counts requests blocked by any rule of the web ACL, and exists only with WAF on', () => {
    expect(alarmNamed('WafBlockedRequests').Properties).toMatchObject({
      Namespace: 'AWS/WAFV2',
      MetricName: 'BlockedRequests',
      Statistic: 'Sum',
      Threshold: 100,
      Dimensions: expect.arrayContaining([
        { Name: 'WebACL', Value: 'PartnerCaseApi-dev' },
        { Name: 'Region', Value: 'eu-west-2' },
        { Name: 'Rule', Value: 'ALL' },
      ]),
    });
    expect(alarms({ waf: 'false' }).some((a) => a.Properties.MetricName === 'BlockedRequests')).toBe(false);
    expect(alarmNamed('WafBlockedRequests', { alarmWafBlockedRequests: '500' }).Properties.Threshold).toBe(500);
  });

  it('the 5XX alarm watches the share of failed requests on the stage', () => {
    const alarm = alarms().find((a) => a.Properties.MetricName === '5XXError');
    expect(alarm?.Properties).toMatchObject({ Statistic: 'Average', Threshold: 0.01, ComparisonOperator: 'GreaterThanThreshold' });
    expect((alarm?.Properties.Dimensions as { Name: string }[]).map((d) => d.Name).sort()).toEqual(['ApiName', 'Stage']);
  });

  it('the latency alarm watches p99 against the configured threshold', () => {
    const alarm = alarms({ alarmLatencyP99Ms: '2500' }).find((a) => a.Properties.MetricName === 'Latency');
    expect(alarm?.Properties).toMatchObject({ ExtendedStatistic: 'p99', Threshold: 2500 });
  });

  it('every function has an Errors and a Throttles alarm', () => {
    const fnAlarms = alarms().filter((a) => ['Errors', 'Throttles'].includes(a.Properties.MetricName as string));
    const targets = fnAlarms.map(
      (a) => `${a.Properties.MetricName as string} ${JSON.stringify((a.Properties.Dimensions as { Value: unknown }[])[0]?.Value)}`,
    );
    for (const id of ['GetCase', 'CreateCases', 'CreateUpload', 'WithdrawCase']) {
      expect(targets.filter((t) => t.includes(`"${id}Function`))).toHaveLength(2);
    }
  });

  it('DynamoDB throttling and system errors are summed over the operations the service uses, the batch reads of every citing batch included', () => {
    for (const metric of ['ThrottledRequests', 'SystemErrors']) {
      const alarm = alarms().find((a) => metricNames(a).includes(metric));
      const operations = ((alarm?.Properties.Metrics ?? []) as MetricQuery[])
        .flatMap((m) => (m.MetricStat ? m.MetricStat.Metric.Dimensions : []))
        .filter((d) => d.Name === 'Operation')
        .map((d) => d.Value);
      expect(operations.sort()).toEqual(['BatchGetItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'TransactWriteItems', 'UpdateItem']);
    }
  });

  it('every function has Errors and Throttles alarms, every function a stream mapping feeds an IteratorAge alarm, every queue backlog and in-flight alarms, every consumed queue an age alarm', () => {
    const resources = synth().template.toJSON().Resources as Record<string, Resource>;
    const all = alarms();
    /** The alarms on a metric whose one dimension points at the resource (Ref or GetAtt). */
    const on = (metricName: string, logicalId: string) =>
      all.filter(
        (a) =>
          a.Properties.MetricName === metricName &&
          JSON.stringify((a.Properties.Dimensions as { Value: unknown }[])[0]?.Value).includes(`"${logicalId}"`),
      );
    const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
    const mappings = ofType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    // CDK's own deploy-time custom resource (the bucket notifications) is not a workload.
    const functions = ofType('AWS::Lambda::Function').filter(([id]) => !id.startsWith('BucketNotificationsHandler'));
    expect(functions.length).toBeGreaterThanOrEqual(22);
    for (const [id] of functions) {
      const fedByStream = mappings.some((m) => m.StartingPosition !== undefined && JSON.stringify(m.FunctionName).includes(`"${id}"`));
      expect({
        id,
        errors: on('Errors', id).length,
        throttles: on('Throttles', id).length,
        iteratorAge: on('IteratorAge', id).length,
      }).toEqual({
        id,
        errors: 1,
        throttles: 1,
        iteratorAge: fedByStream ? 1 : 0,
      });
    }
    expect(mappings.filter((m) => m.StartingPosition !== undefined)).toHaveLength(2);
    const queues = ofType('AWS::SQS::Queue');
    expect(queues.length).toBeGreaterThanOrEqual(8);
    for (const [id] of queues) {
      const consumed = mappings.some((m) => JSON.stringify(m.EventSourceArn).includes(`"${id}"`));
      const inFlight = on('ApproximateNumberOfMessagesNotVisible', id);
      expect({ id, inFlight: inFlight.map((a) => [a.Properties.Threshold, a.Properties.ComparisonOperator]) }).toEqual({
        id,
        inFlight: [[WORKLOAD_ALARMS.inFlightMessages, 'GreaterThanOrEqualToThreshold']],
      });
      // A consumed queue pages on a lasting backlog; a queue nothing consumes (failed work) at its first message.
      const visible = on('ApproximateNumberOfMessagesVisible', id).map((a) => a.Properties.Threshold);
      expect({ id, visible, age: on('ApproximateAgeOfOldestMessage', id).length }).toEqual({
        id,
        visible: [consumed ? WORKLOAD_ALARMS.backlogMessages : 1],
        age: consumed ? 1 : 0,
      });
    }
    expect(WORKLOAD_ALARMS.inFlightMessages).toBeLessThan(WORKLOAD_ALARMS.sqsInFlightQuota);
  });

  it('every metric in an alarm\u2019s math is FILLed with 0, so a period where only the bad series has data still has a value', () => {
    const math = alarms().filter((a) => a.Properties.Metrics);
    expect(math.map((a) => a.Properties.AlarmName).sort()).toEqual(
      [
        'ApiClientErrorRate',
        'DebtorVerifierSilent',
        'TableSystemErrors',
        'TableThrottledRequests',
        'WebhookFailureRate',
        'WebhookFanOutSilent',
        'WebhookGiveUpRate',
      ].map((id) => `PartnerCaseApi-dev-${id}`),
    );
    for (const alarm of math) {
      const queries = alarm.Properties.Metrics as MetricQuery[];
      const expression = queries.find((q) => q.Expression)!.Expression!;
      for (const { Id } of queries.filter((q) => q.MetricStat)) {
        const uses = [...expression.matchAll(new RegExp(`\\b${Id}\\b`, 'g'))].length;
        const filled = [...expression.matchAll(new RegExp(`FILL\\(${Id}, 0\\)`, 'g'))].length;
        expect({ alarm: alarm.Properties.AlarmName, id: Id, uses: uses > 0, unfilled: uses - filled }).toEqual({
          alarm: alarm.Properties.AlarmName,
          id: Id,
          uses: true,
          unfilled: 0,
        });
      }
    }
    const table = alarmNamed('TableThrottledRequests').Properties.Metrics as MetricQuery[];
    expect(table.find((q) => q.Expression)?.Expression).toBe(
      'FILL(getitem, 0) + FILL(batchgetitem, 0) + FILL(putitem, 0) + FILL(updateitem, 0) + FILL(deleteitem, 0) + FILL(transactwriteitems, 0) + FILL(query, 0)',
    );
  });

  it('a stream consumer never invoked for two hours in which cases were created pages: a filter that matches nothing is seen', () => {
    const { stack } = synth();
    for (const [id, fn] of [
      ['WebhookFanOutSilent', stack.webhookDelivery.fanOut.function],
      ['DebtorVerifierSilent', stack.debtorVerifier.worker.function],
    ] as const) {
      const alarm = alarmNamed(id);
      expect(alarm.Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 2, DatapointsToAlarm: 2 });
      const queries = alarm.Properties.Metrics as MetricQuery[];
      expect(queries.find((q) => q.Expression)?.Expression).toBe('IF(FILL(created, 0) >= 1 AND FILL(invocations, 0) == 0, 1, 0)');
      const byId = Object.fromEntries(queries.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat]));
      expect(byId.created).toMatchObject({ Metric: { Namespace: 'PartnerCaseApi', MetricName: 'CasesCreated' }, Stat: 'Sum' });
      expect(byId.invocations).toMatchObject({
        Metric: {
          Namespace: 'AWS/Lambda',
          MetricName: 'Invocations',
          Dimensions: [{ Name: 'FunctionName', Value: stack.resolve(fn.functionName) }],
        },
        Stat: 'Sum',
      });
    }
  });

  it('every alarm has a runbook row in docs/deploy.md, and every doc an alarm names exists', () => {
    const deployDoc = readFileSync(path.join(PROJECT_ROOT, 'docs/deploy.md'), 'utf8');
    // A table row whose first cell starts with the alarm's name (or names), or with a family's: `<Function>Errors`, `<Queue>InFlight`.
    const rows = [...deployDoc.matchAll(/^\| ((?:`[^`]+`(?:, )?)+)/gm)].flatMap((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!));
    const families = rows.flatMap((r) => {
      const family = /^<(Function|Queue)>(\w+)$/.exec(r);
      return family ? [{ of: family[1] === 'Function' ? 'FunctionName' : 'QueueName', suffix: family[2]! }] : [];
    });
    const missing = alarms().flatMap((alarm) => {
      const name = (alarm.Properties.AlarmName as string).replace(/^PartnerCaseApi-dev-/, '');
      if (rows.includes(name)) return [];
      const dimension = ((alarm.Properties.Dimensions ?? []) as { Name: string }[])[0]?.Name;
      return families.some((f) => name.endsWith(f.suffix) && f.of === dimension) ? [] : [name];
    });
    expect(missing).toEqual([]);
    const named = alarms().flatMap((a) => [...String(a.Properties.AlarmDescription).matchAll(/docs\/[\w./-]*\w/g)].map((m) => m[0]));
    expect(named).toContain('docs/deploy.md');
    for (const doc of new Set(named)) expect({ doc, exists: existsSync(path.join(PROJECT_ROOT, doc)) }).toEqual({ doc, exists: true });
  });

  it('the runbook row of every queue-age alarm with a row of its own states the threshold the stack sets, in seconds', () => {
    const deployDoc = readFileSync(path.join(PROJECT_ROOT, 'docs/deploy.md'), 'utf8');
    const firstCells = [...deployDoc.matchAll(/^\| (`[^|]+?) +\|/gm)].map((m) => m[1]!);
    const ages = alarms().filter((a) => a.Properties.MetricName === 'ApproximateAgeOfOldestMessage');
    const stated = ages.flatMap((alarm) => {
      const name = (alarm.Properties.AlarmName as string).replace(/^PartnerCaseApi-dev-/, '');
      const cell = firstCells.find((c) => c.includes(`\`${name}\``));
      return cell === undefined ? [] : [{ name, cell, threshold: `> ${(alarm.Properties.Threshold as number).toLocaleString('en-GB')} s` }];
    });
    expect(stated.map((s) => s.name).sort()).toEqual(
      [
        'WebhookFastLaneAge',
        'WebhookSlowLaneAge',
        'WebhookTestFastLaneAge',
        'WebhookTestSlowLaneAge',
        'WebhookPlanningAge',
        'WebhookTestPlanningAge',
      ].sort(),
    );
    for (const { name, cell, threshold } of stated) expect({ name, states: cell.includes(threshold) }).toEqual({ name, states: true });
  });

  it('every alarm notifies the alarm topic on alarm and on recovery', () => {
    const topicId = Object.keys(resourcesOfType(synth().template, 'AWS::SNS::Topic'))[0];
    for (const alarm of alarms()) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
      // No datapoint means nothing happened, except for a heartbeat: the sweeper's invocations, every 5 minutes.
      const heartbeat = alarm.Properties.AlarmName === 'PartnerCaseApi-dev-WebhookSweepSilent';
      expect(alarm.Properties.TreatMissingData).toBe(heartbeat ? 'breaching' : 'notBreaching');
    }
  });

  it('the topic is subscribed by e-mail when alarmEmail is given (dev may go without)', () => {
    expect(Object.keys(resourcesOfType(synth().template, 'AWS::SNS::Subscription'))).toHaveLength(0);
    const subscription = onlyResource(synth({ alarmEmail: 'ops@example.com' }).template, 'AWS::SNS::Subscription');
    expect(subscription.Properties).toMatchObject({ Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it("the topic lets this account's alarms of this stack publish, and refuses anything without TLS", () => {
    const { template } = synth();
    const topicId = Object.keys(resourcesOfType(template, 'AWS::SNS::Topic'))[0];
    const policy = onlyResource(template, 'AWS::SNS::TopicPolicy');
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    expect(statements).toHaveLength(2);
    expect(statements).toContainEqual({
      Sid: 'AllowThisStacksAlarmsToPublish',
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: { Ref: topicId },
      Condition: {
        StringEquals: { 'aws:SourceAccount': '111111111111' },
        ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-2:111111111111:alarm:PartnerCaseApi-dev-*' },
      },
    });
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    for (const alarm of alarms()) expect(alarm.Properties.AlarmName).toMatch(/^PartnerCaseApi-dev-/);
  });
});

type Widget = { type: string; width: number; properties: Record<string, unknown> };

function dashboardWidgets(context: Record<string, unknown> = {}): Widget[] {
  const dashboard = onlyResource(synth(context).template, 'AWS::CloudWatch::Dashboard');
  expect(dashboard.Properties.DashboardName).toBe('PartnerCaseApi-dev');
  // The body is a Fn::Join of literal JSON and references; references become placeholders.
  const parts = (dashboard.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  const body = parts.map((p) => (typeof p === 'string' ? p : 'REF')).join('');
  return (JSON.parse(body) as { widgets: Widget[] }).widgets;
}

const titled = (widgets: Widget[], title: string): Widget => {
  const found = widgets.find((w) => w.properties.title === title);
  if (!found) throw new Error(`no widget ${title}`);
  return found;
};

const metricNamesOf = (widget: Widget): string[] => ((widget.properties.metrics ?? []) as unknown[][]).map((m) => m[1] as string);

describe('the dashboard of the partner path', () => {
  it('shows requests, 4XX/5XX, latency p50 and p99, cases, failed writes, rejections by code, every throttle, the upload records and webhook delivery', () => {
    expect(dashboardWidgets().map((w) => w.properties.title)).toEqual([
      'Alarms',
      'Requests',
      'Errors',
      'Latency (ms)',
      'Cases',
      'Failed case writes',
      'Created and rejected by code',
      'Throttles: WAF rate rules',
      'Throttles: stage (429)',
      'Throttles: Lambda',
      'Throttles: DynamoDB',
      'Upload records: record-upload',
      'Upload records: failed events waiting',
      'Webhooks: outcomes',
      'Webhooks: test-mode outcomes',
      'Webhooks: oldest message per lane (s)',
      'Webhooks: sweeper',
      'Webhooks: queues',
    ]);
  });

  it('shows record-upload’s invocations, errors and dropped events, and the failed events waiting in its queue', () => {
    const widgets = dashboardWidgets();
    expect(metricNamesOf(titled(widgets, 'Upload records: record-upload'))).toEqual(['Invocations', 'Errors', 'AsyncEventsDropped']);
    expect(metricNamesOf(titled(widgets, 'Upload records: failed events waiting'))).toEqual(['ApproximateNumberOfMessagesVisible']);
  });

  it('plots latency at p50 and p99', () => {
    const stats = (titled(dashboardWidgets(), 'Latency (ms)').properties.metrics as unknown[][]).map(
      (m) => (m.at(-1) as { stat: string }).stat,
    );
    expect(stats).toEqual(['p50', 'p99', 'p99']);
  });

  it('plots cases created and rejected, and the two kinds of failed write', () => {
    const widgets = dashboardWidgets();
    expect(metricNamesOf(titled(widgets, 'Cases'))).toEqual(['CasesSubmitted', 'CasesCreated', 'CasesRejected']);
    expect(metricNamesOf(titled(widgets, 'Failed case writes'))).toEqual(['CasesTemporaryFailure', 'CaseWriteOutcomeUnknown']);
  });

  it('counts rejections by every rejection code from the create-cases log', () => {
    const widget = titled(dashboardWidgets(), 'Created and rejected by code');
    expect(widget.type).toBe('log');
    const query = widget.properties.query as string;
    expect(query).toContain('filter message = "request completed"');
    for (const code of REJECTION_CODES) expect(query).toContain(`sum(rejected_${code}) as ${code}`);
  });

  it('shows the three WAF rate rules, and no WAF widget when WAF is off', () => {
    const rules = (titled(dashboardWidgets(), 'Throttles: WAF rate rules').properties.metrics as unknown[][]).map(
      (m) => m[m.indexOf('Rule') + 1],
    );
    expect(rules).toEqual(['RateLimitPerIp', 'RateLimitPerAuthorizationHeader', 'RateLimitPerApiKeyHeader']);
    expect(dashboardWidgets({ waf: 'false' }).map((w) => w.properties.title)).not.toContain('Throttles: WAF rate rules');
  });

  it('counts the stage throttle\'s 429s in "Throttles: stage", not WAF rate-limit blocks (also 429)', () => {
    const widget = titled(dashboardWidgets(), 'Throttles: stage (429)');
    // One access-log line per answer, with the fields of the stage's access log format.
    const fields = Object.keys(JSON.parse(accessLogFormat().toString()) as Record<string, unknown>);
    const line = (values: Record<string, string>): Record<string, string> => Object.fromEntries(fields.map((f) => [f, values[f] ?? '-']));
    const stageThrottle = line({ status: '429', errorResponseType: 'THROTTLED', wafStatus: '-' });
    const wafRateLimit = line({ status: '429', errorResponseType: 'WAF_FILTERED', wafStatus: '429', wafResponseCode: 'WAF_BLOCK' });
    const wafBlock = line({ status: '403', errorResponseType: 'WAF_FILTERED', wafStatus: '403', wafResponseCode: 'WAF_BLOCK' });
    const answered = line({ status: '200', wafStatus: '200' });
    const counted = [stageThrottle, wafRateLimit, wafBlock, answered].filter((l) =>
      logsInsightsFilter(widget.properties.query as string, fields)(l),
    );
    expect(counted).toEqual([stageThrottle]);
  });
});

/**
 * The `filter` stage of a Logs Insights query as a predicate over one JSON log line: `field = "v"`
 * and `field != "v"` joined by `and`, each field one the access log writes. Anything else fails
 * the test rather than being guessed.
 */
function logsInsightsFilter(query: string, fields: string[]): (line: Record<string, string>) => boolean {
  const filter = query.split(/\s*\|\s*/).find((stage) => stage.startsWith('filter '));
  if (!filter) throw new Error(`no filter in ${query}`);
  const terms = filter
    .slice('filter '.length)
    .split(/\s+and\s+/)
    .map((term) => {
      const match = /^(\w+)\s*(!=|=)\s*"([^"]*)"$/.exec(term.trim());
      if (!match) throw new Error(`unsupported filter term ${term}`);
      const [, field, operator, value] = match as unknown as [string, string, string, string];
      if (!fields.includes(field)) throw new Error(`the access log has no field ${field}`);
      return (line: Record<string, string>) => (operator === '=' ? line[field] === value : line[field] !== value);
    });
  return (line) => terms.every((term) => term(line));
}
