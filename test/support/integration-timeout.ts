// An integration test makes several requests to DynamoDB Local, s3rver and the local SQS, which on a busy 2-core CI
// machine (the other jest worker, the engines of the global setup) can together take longer than jest's 5 s default
// for a unit test: CI runs failed that way (the README walk-through, the test recovery helper's refusals). Speed is
// the bench's to judge (`npm run bench`), never a test timeout's; a test that hangs still fails, after 30 s.
jest.setTimeout(30_000);
