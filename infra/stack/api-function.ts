import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal, type PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { FILE_KEY_PREFIXES } from '../../lib/uploads/file-key.js';
import { Construct } from 'constructs';
import type { InvoiceBucketAccess, TableAccess } from '../contract/routes/index.js';
import { grantStatements } from './grants.js';

/**
 * The newest Node.js runtime this aws-cdk-lib offers, on Graviton (arm64: cheaper per GB-second
 * and at least as fast for this I/O-bound work). cdk-nag's AwsSolutions-L1 passes only on the
 * newest runtime of the family, so bumping aws-cdk-lib may ask for a bump here too.
 */
export const API_RUNTIME = Runtime.NODEJS_24_X;
export const API_ARCHITECTURE = Architecture.ARM_64;
export const ESBUILD_TARGET = 'node24';

/**
 * Provides `require` inside the ESM bundle for the few CommonJS dependencies that call it
 * (esbuild's ESM output cannot shim `require` of Node built-ins on its own).
 */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

export interface ApiFunctionProps {
  /** Absolute path of the handler file; it exports `handler`. */
  entry: string;
  /** Directory holding package-lock.json; esbuild runs from here. */
  projectRoot: string;
  description: string;
  memorySize: number;
  timeout: Duration;
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

/**
 * One API Lambda function with everything it owns: a role that starts empty (no AWS managed
 * policy: it can write to its own log group and send X-Ray traces, nothing more), an explicit log
 * group with retention, and the one bundling configuration every function shares. Data access is
 * added only through `bindTable` and `bindInvoiceBucket`, so the grants stay least-privilege and
 * reviewable in one place (see grants.ts).
 *
 * Reserved concurrency is deliberately not set: the stage throttle and WAF limit load, and a
 * reservation would carve capacity out of the account pool for little benefit at this scale.
 */
export class ApiFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.description}`,
    });

    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      description: props.description,
      runtime: API_RUNTIME,
      architecture: API_ARCHITECTURE,
      memorySize: props.memorySize,
      timeout: props.timeout,
      tracing: Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      environment: props.environment,
      bundling: {
        format: OutputFormat.ESM,
        target: ESBUILD_TARGET,
        minify: true,
        sourceMap: true,
        // The map only needs to translate positions; the sources would double the bundle.
        sourcesContent: false,
        // The SDK bundled and tree-shaken loads much faster than the runtime's copy.
        bundleAwsSDK: true,
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
      },
    });

    // Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords on "*" to the role.
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Only the X-Ray actions that Lambda active tracing adds; X-Ray supports no resource-level permissions.',
    });
  }

  /** The table statements of one kind of access (grants.ts GRANTS: what each allows and denies). */
  bindTable(table: ITable, access: TableAccess): void {
    this.addStatements(grantStatements(access, { table }));
  }

  /** The list cursors' key: read access to the one secret, and its ARN (never its value) in the environment. */
  bindCursorSecret(secret: ISecret): void {
    secret.grantRead(this.role);
    this.function.addEnvironment('CURSOR_SECRET_ARN', secret.secretArn);
  }

  /** The key that seals webhook endpoint secrets: read access to the one secret, and its ARN (never its value) in the environment. */
  bindWebhookSecretKey(secret: ISecret): void {
    secret.grantRead(this.role);
    this.function.addEnvironment('WEBHOOK_SECRET_KEY_ARN', secret.secretArn);
  }

  bindInvoiceBucket(bucket: IBucket, access: InvoiceBucketAccess): void {
    this.addStatements(grantStatements(access, { bucket }));
    const stack = Stack.of(this);
    const bucketLogicalId = stack.resolve(stack.getLogicalId(bucket.node.defaultChild as CfnElement)) as string;
    for (const prefix of Object.values(FILE_KEY_PREFIXES)) {
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/${prefix}*]`,
        reason:
          `Object keys are generated per upload (${prefix}<companyId>/<random id>; invoices/ live, test-invoices/ test mode), so the grant covers the ${prefix} ` +
          "prefix; it is a single object action, and the handlers confine each call to the caller's company and mode prefix.",
      });
    }
  }

  private addStatements(statements: PolicyStatement[]): void {
    for (const statement of statements) this.role.addToPrincipalPolicy(statement);
  }
}
