import { createHash } from 'node:crypto';

/**
 * A fingerprint of a request's parsed body, kept with its Idempotency-Key claim (never the body
 * itself): SHA-256 of its canonical JSON (object keys sorted at every level, no whitespace), so
 * the same cases sent with another key order or spacing count as the same request, and any change
 * of a value does not. Walked with an explicit stack: a body may nest 500,000 levels deep within
 * 1 MiB, and a recursive walk would overflow the call stack.
 */
type Step = { text: string } | { value: unknown };

export function requestFingerprint(body: unknown): string {
  const hash = createHash('sha256');
  const stack: Step[] = [{ value: body }];
  while (stack.length > 0) {
    const step = stack.pop() as Step;
    if ('text' in step) {
      hash.update(step.text);
      continue;
    }
    const { value } = step;
    if (Array.isArray(value)) {
      stack.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i] });
        if (i > 0) stack.push({ text: ',' });
      }
      stack.push({ text: '[' });
    } else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const names = Object.keys(record).sort();
      stack.push({ text: '}' });
      for (let i = names.length - 1; i >= 0; i--) {
        const name = names[i] as string;
        stack.push({ value: record[name] });
        stack.push({ text: `${JSON.stringify(name)}:` });
        if (i > 0) stack.push({ text: ',' });
      }
      stack.push({ text: '{' });
    } else {
      hash.update(JSON.stringify(value) ?? 'null');
    }
  }
  return hash.digest('hex');
}
