import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * All values of one request header, matched case-insensitively. API Gateway passes header names
 * as the client sent them, and repeats in `multiValueHeaders`.
 */
export function headerValues(event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  const multi = event.multiValueHeaders ?? {};
  let sawMulti = false;
  for (const [key, list] of Object.entries(multi)) {
    if (key.toLowerCase() === wanted && Array.isArray(list)) {
      sawMulti = true;
      values.push(...list.filter((v): v is string => typeof v === 'string'));
    }
  }
  if (!sawMulti) {
    for (const [key, value] of Object.entries(event.headers ?? {})) {
      if (key.toLowerCase() === wanted && typeof value === 'string') values.push(value);
    }
  }
  return values;
}

/** The single value of a header; `undefined` when absent; `null` when sent more than once. */
export function singleHeader(event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string): string | undefined | null {
  const values = headerValues(event, name);
  if (values.length === 0) return undefined;
  if (values.length > 1) return null;
  return values[0];
}
