/**
 * A UTF-16 surrogate without its partner is not text: it cannot be encoded as UTF-8, so storage
 * would replace it with U+FFFD and two different inputs (`"\ud800"`, `"\udbff"`) would collapse
 * into one stored value. Such strings are refused wherever a string is accepted.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
