import { ResponseType, type Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  LogQueryVisualizationType,
  LogQueryWidget,
  type IAlarm,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { REJECTION_CODES } from '../../lib/cases/case-input.js';
import { TABLE_OPERATIONS } from './alarms.js';
import { caseMetric, METRIC_PERIOD, wafMetric } from './service-metrics.js';
import { API_FUNCTION_IDS, API_FUNCTIONS, type ApiFunctionId } from '../contract/route-table.js';

export interface ServiceDashboardProps {
  /** The dashboard's name (the stack name). */
  dashboardName: string;
  stage: Stage;
  functions: Readonly<Record<ApiFunctionId, IFunction>>;
  table: ITable;
  /** create-cases' log group: its "request completed" line counts each batch's rejections by code. */
  createCasesLogGroup: ILogGroup;
  /** The API's access log group (one JSON line per request, with status and WAF status). */
  accessLogGroup: ILogGroup;
  /** The web ACL's metric name, its region and its rate-based rules' metric names, when WAF is on. */
  webAcl?: { metricName: string; region: string; rateRuleMetricNames: string[] } | undefined;
  alarms: IAlarm[];
}

const WIDTH = 8;
const HEIGHT = 6;

/**
 * Rejections by code, from the one "request completed" line create-cases writes per batch
 * (lib/http/request-context.ts), which carries `rejected_<CODE>` counts. Codes come from
 * the service's own list, so a new code appears here without an edit.
 */
export function rejectionsByCodeQuery(): string {
  const sums = ['sum(created) as created', ...REJECTION_CODES.map((code) => `sum(rejected_${code}) as ${code}`)];
  return [`filter message = "request completed"`, `stats ${sums.join(', ')} by bin(5m)`].join('\n| ');
}

/**
 * Answers the stage throttle gave per five minutes, from the access log. Selected by API Gateway's
 * error response type, not by status: WAF's rate rules answer 429 too (infra/waf.ts), and those
 * are logged with the response type WAF_FILTERED; the stage throttle's are THROTTLED.
 */
export const STAGE_THROTTLES_QUERY = [
  `filter errorResponseType = "${ResponseType.THROTTLED.responseType}"`,
  'stats count(*) as stageThrottled by bin(5m)',
].join('\n| ');

/**
 * One CloudWatch dashboard of the partner's path, top to bottom: the alarms; traffic, errors and
 * latency at the API; what happened to submitted cases (created, rejected by code, failed
 * writes); and everything that throttles a partner (WAF rate rules, the stage throttle, Lambda,
 * DynamoDB).
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    const period = METRIC_PERIOD;
    const { stage } = props;

    const graph = (title: string, left: IMetric[], width = WIDTH): GraphWidget =>
      new GraphWidget({ title, left, width, height: HEIGHT, period });

    const rows: IWidget[][] = [
      [new AlarmStatusWidget({ title: 'Alarms', alarms: props.alarms, width: 24, height: 4 })],
      [
        graph('Requests', [stage.metricCount({ statistic: 'Sum', period, label: 'requests' })]),
        graph('Errors', [
          stage.metricClientError({ statistic: 'Sum', period, label: '4XX' }),
          stage.metricServerError({ statistic: 'Sum', period, label: '5XX' }),
        ]),
        graph('Latency (ms)', [
          stage.metricLatency({ statistic: 'p50', period, label: 'p50' }),
          stage.metricLatency({ statistic: 'p99', period, label: 'p99' }),
          stage.metricIntegrationLatency({ statistic: 'p99', period, label: 'integration p99' }),
        ]),
      ],
      [
        graph('Cases', [
          caseMetric('submitted', { label: 'submitted' }),
          caseMetric('created', { label: 'created' }),
          caseMetric('rejected', { label: 'rejected' }),
        ]),
        graph('Failed case writes', [
          caseMetric('temporaryFailure', { label: 'TEMPORARY_FAILURE' }),
          caseMetric('outcomeUnknown', { label: 'outcome unknown' }),
        ]),
        new LogQueryWidget({
          title: 'Created and rejected by code',
          logGroupNames: [props.createCasesLogGroup.logGroupName],
          queryString: rejectionsByCodeQuery(),
          view: LogQueryVisualizationType.STACKEDAREA,
          width: WIDTH,
          height: HEIGHT,
        }),
      ],
    ];

    const throttles: IWidget[] = [];
    const webAcl = props.webAcl;
    if (webAcl) {
      throttles.push(
        graph(
          'Throttles: WAF rate rules',
          webAcl.rateRuleMetricNames.map((rule) => wafMetric('BlockedRequests', webAcl, rule, { label: rule })),
          6,
        ),
      );
    }
    const width = webAcl ? 6 : WIDTH;
    throttles.push(
      new LogQueryWidget({
        title: 'Throttles: stage (429)',
        logGroupNames: [props.accessLogGroup.logGroupName],
        queryString: STAGE_THROTTLES_QUERY,
        view: LogQueryVisualizationType.BAR,
        width,
        height: HEIGHT,
      }),
      graph(
        'Throttles: Lambda',
        API_FUNCTION_IDS.map((id) =>
          props.functions[id].metricThrottles({ statistic: 'Sum', period, label: API_FUNCTIONS[id].constructId }),
        ),
        width,
      ),
      graph(
        'Throttles: DynamoDB',
        [props.table.metricThrottledRequestsForOperations({ operations: [...TABLE_OPERATIONS], period, label: 'throttled requests' })],
        width,
      ),
    );
    rows.push(throttles);

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      widgets: rows,
    });
  }
}
