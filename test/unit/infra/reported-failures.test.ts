import { reportedFailures } from '../../../infra/local/reported-failures.js';

describe("the local pollers read a handler's partial batch response as Lambda does", () => {
  const ids = ['49600000000000000001', '49600000000000000002'];

  it('names the records reported, and nothing when none is', () => {
    expect(reportedFailures([{ itemIdentifier: ids[1] }], ids)).toEqual(new Set([ids[1]]));
    expect(reportedFailures([], ids)).toEqual(new Set());
    expect(reportedFailures(undefined, ids)).toEqual(new Set());
  });

  it('fails the whole batch for an empty, missing, misnamed or unknown itemIdentifier', () => {
    expect(reportedFailures([{ itemIdentifier: '' }], ids)).toBe('whole-batch');
    expect(reportedFailures([{ itemIdentifier: null }], ids)).toBe('whole-batch');
    expect(reportedFailures([{ itemIdentifer: ids[0] } as never], ids)).toBe('whole-batch');
    expect(reportedFailures([{ itemIdentifier: ids[0] }, { itemIdentifier: 'not-in-this-batch' }], ids)).toBe('whole-batch');
  });
});
