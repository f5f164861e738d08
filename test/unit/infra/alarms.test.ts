import { onlyResource, resourcesOfType, synth, type Resource } from './synth.js';

type MetricQuery = { MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] } } };

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
  it('watch the API, every function and the table', () => {
    expect(countByMetric(alarms())).toEqual({
      '5XXError': 1,
      Latency: 1,
      Errors: 3,
      Throttles: 3,
      ThrottledRequests: 1,
      SystemErrors: 1,
    });
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
    for (const id of ['GetCase', 'CreateCases', 'CreateUpload']) {
      expect(targets.filter((t) => t.includes(`"${id}Function`))).toHaveLength(2);
    }
  });

  it('DynamoDB throttling and system errors are summed over the operations the service uses', () => {
    for (const metric of ['ThrottledRequests', 'SystemErrors']) {
      const alarm = alarms().find((a) => metricNames(a).includes(metric));
      const operations = ((alarm?.Properties.Metrics ?? []) as MetricQuery[])
        .flatMap((m) => (m.MetricStat ? m.MetricStat.Metric.Dimensions : []))
        .filter((d) => d.Name === 'Operation')
        .map((d) => d.Value);
      expect(operations.sort()).toEqual(['DeleteItem', 'GetItem', 'PutItem', 'Query', 'TransactWriteItems', 'UpdateItem']);
    }
  });

  it('every alarm notifies the alarm topic on alarm and on recovery', () => {
    const topicId = Object.keys(resourcesOfType(synth().template, 'AWS::SNS::Topic'))[0];
    for (const alarm of alarms()) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.TreatMissingData).toBe('notBreaching');
    }
  });

  it('the topic requires TLS and is subscribed by e-mail only when alarmEmail is given', () => {
    expect(Object.keys(resourcesOfType(synth().template, 'AWS::SNS::Subscription'))).toHaveLength(0);
    const subscription = onlyResource(synth({ alarmEmail: 'ops@example.com' }).template, 'AWS::SNS::Subscription');
    expect(subscription.Properties).toMatchObject({ Protocol: 'email', Endpoint: 'ops@example.com' });
    const policy = onlyResource(synth().template, 'AWS::SNS::TopicPolicy');
    expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });
});
