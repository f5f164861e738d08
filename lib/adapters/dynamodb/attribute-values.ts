import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * Items in DynamoDB's own AttributeValue form, built in one pass from flat parts. The case writer
 * sends its transactions this way instead of through the DocumentClient: a 100-case batch is 300
 * items, and building them with object spreads and then marshalling them through lib-dynamodb
 * cost about 6 ms of CPU per batch (bench section 2c, docs/performance.md), against 0.3 ms here.
 *
 * Only what our writes store: strings, numbers and booleans, one level deep (no maps, lists, sets
 * or binary). The types refuse anything else at compile time; the checks below refuse it at run
 * time, with the same rules as util-dynamodb's `marshall` (`removeUndefinedValues`: an undefined
 * attribute is left out; a number that is not finite or not exactly representable is refused).
 */
type Scalar = string | number | boolean | undefined;
/** An object whose every property is a scalar (an interface qualifies, unlike an index signature). */
type Flat<T> = { [K in keyof T]: Scalar };
type None = Record<never, never>;

export function attributeValue(value: Scalar, name = 'value'): AttributeValue | undefined {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) {
        throw new RangeError(`${name}: ${value} cannot be stored exactly as a DynamoDB number`);
      }
      return { N: String(value) };
    case 'boolean':
      return { BOOL: value };
    case 'undefined':
      return undefined;
    default:
      throw new TypeError(`${name}: only strings, numbers and booleans are stored flat, not ${typeof value}`);
  }
}

/** One item from up to four flat parts; a later part's attribute replaces an earlier one's. */
export function attributeMap<A extends Flat<A>, B extends Flat<B> = None, C extends Flat<C> = None, D extends Flat<D> = None>(
  a: A,
  b?: B,
  c?: C,
  d?: D,
): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {};
  for (const part of [a, b, c, d]) {
    if (part === undefined) continue;
    const record = part as Readonly<Record<string, Scalar>>;
    for (const name in record) {
      if (!Object.prototype.hasOwnProperty.call(record, name)) continue;
      const value = attributeValue(record[name], name);
      if (value === undefined) delete item[name];
      else item[name] = value;
    }
  }
  return item;
}
