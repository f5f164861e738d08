import { CASE_EVENT_TYPES, caseEventSchema } from '../../../lib/cases/case-lifecycle.js';
import { parseCreateEndpointRequest, SUBSCRIBABLE_EVENT_TYPES, subscribesTo } from '../../../lib/webhooks/webhook-endpoint.js';

const url = 'https://hooks.partner.example/in';

describe('the event types a webhook endpoint can subscribe to', () => {
  it('are the event types the case event schema defines, and `*`', () => {
    const schemaTypes = caseEventSchema.options.map((option) => option.shape.type.value);
    expect([...CASE_EVENT_TYPES].sort()).toEqual([...schemaTypes].sort());
    expect([...SUBSCRIBABLE_EVENT_TYPES].sort()).toEqual([...schemaTypes, '*'].sort());
  });

  it.each(CASE_EVENT_TYPES)('include %s: an endpoint may subscribe to it and then receives it', (type) => {
    const parsed = parseCreateEndpointRequest({ url, events: [type] });
    expect(parsed).toEqual({ ok: true, value: { url, events: [type] } });
    expect(subscribesTo({ events: [type] }, type)).toBe(true);
  });

  it('refuse a type no case event has, naming the allowed ones', () => {
    const parsed = parseCreateEndpointRequest({ url, events: ['case.deleted'] });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors[0]?.message).toContain(SUBSCRIBABLE_EVENT_TYPES.join(', '));
  });
});
