/** A query string's parameters, a repeated parameter with every value in order. */
export type RawQuery = Record<string, string | string[]>;

/**
 * The query as sent, decoded but not otherwise normalised, as the two local SigV4 checks
 * (execute-api, S3) need it to recompute a signature: `+` stays `+` (SigV4 clients encode a space
 * as %20), a parameter without `=` has the empty value, repeated parameters keep every value.
 * Undefined when a part is not validly URL-encoded.
 */
export function parseRawQuery(raw: string): RawQuery | undefined {
  const query: RawQuery = {};
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(eq === -1 ? part : part.slice(0, eq));
      value = eq === -1 ? '' : decodeURIComponent(part.slice(eq + 1));
    } catch {
      return undefined;
    }
    const existing = query[key];
    query[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return query;
}
