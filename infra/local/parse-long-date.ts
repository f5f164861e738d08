const LONG_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * SigV4's `x-amz-date` form, `20261123T051535Z`, as epoch ms (both local signature checks,
 * execute-api and S3); undefined when it is not exactly that form or not a real date.
 */
export function parseLongDate(value: string | undefined): number | undefined {
  const m = value === undefined ? null : LONG_DATE.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const back = new Date(ms);
  if (back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return undefined;
  return ms;
}
