// Runs in a fresh Node process (plain node, no loader): loads one bundled handler and invokes it
// with the events in a JSON file, as the Lambda runtime would on a cold start. Prints one line
// `BENCH_RESULT {...}` (the handler's own log lines go to stdout too, as on Lambda).
//   node cold-child.mjs <bundle.mjs> <events.json>
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';

const [bundlePath, eventsPath] = process.argv.slice(2);
const events = JSON.parse(readFileSync(eventsPath, 'utf8'));
const context = () => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'bench-cold',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-2:000000000000:function:bench-cold',
  memoryLimitInMB: '512',
  awsRequestId: randomUUID(),
  logGroupName: '/aws/lambda/bench-cold',
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 29000,
});

const t0 = performance.now();
const mod = await import(pathToFileURL(bundlePath).href);
const t1 = performance.now();
const invocations = [];
let firstEnd = 0;
for (const event of events) {
  const start = performance.now();
  const result = await mod.handler(event, context());
  const ms = performance.now() - start;
  firstEnd ||= performance.now();
  invocations.push({
    statusCode: result.statusCode,
    ms,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    body: result.statusCode >= 300 ? String(result.body).slice(0, 300) : undefined,
  });
}
const result = {
  loadMs: t1 - t0,
  firstInvokeMs: invocations[0]?.ms ?? 0,
  coldMs: t1 - t0 + (invocations[0]?.ms ?? 0),
  // performance.now() counts from the process's time origin: Node's own start-up included.
  processStartToFirstResponseMs: firstEnd,
  invocations,
  heapUsedMb: process.memoryUsage().heapUsed / 1024 / 1024,
};
process.stdout.write(`\nBENCH_RESULT ${JSON.stringify(result)}\n`);
