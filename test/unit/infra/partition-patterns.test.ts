import { INDEX_PARTITIONS, PARTITIONS, TEST_PARTITIONS } from '../../../infra/stack/grants.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { MODES } from '../../../lib/mode.js';
import { CASE, COMPANY, EVENT } from './store-requests.js';

describe('the partition patterns come from the key design', () => {
  it('each pattern matches the keys of the items it stands for, live and test, and no other kind', () => {
    const like = (pattern: string, value: string) => new RegExp(`^${pattern.replace(/[#]/g, '\\#').replace(/\*/g, '.*')}$`).test(value);
    const items = {
      apiKey: [keys.apiKey('k_1').pk],
      case: MODES.flatMap((m) => [keys.case(m, CASE).pk, keys.attestation(m, CASE).pk, keys.payment(m, CASE, 7).pk]),
      company: [keys.company(COMPANY).pk],
      invoiceRefGuard: MODES.map((m) => keys.invoiceRefGuard(m, COMPANY, 'inv-1').pk),
      idempotencyClaim: MODES.map((m) => keys.idempotencyClaim(m, COMPANY, 'idem-1').pk),
      referenceCounter: [keys.caseReferenceCounter().pk],
      upload: [keys.upload('invoices/cmp_AAAAAAAAAAAAAAAA/x.pdf').pk],
      event: MODES.map((m) => keys.event(m, EVENT).pk),
      webhookEndpoints: MODES.flatMap((m) => [keys.webhookEndpoint(m, COMPANY, 'we_1').pk, keys.webhookEndpointCounter(m, COMPANY).pk]),
      webhookDeliveries: MODES.map(
        (m) => keys.webhookDelivery({ mode: m, endpointId: 'we_1', createdAt: '2026-03-01T09:00:00.000Z', deliveryId: 'wd_1' }).pk,
      ),
      webhookDeliverySlots: MODES.flatMap((m) => [
        keys.webhookDeliverySlots(m, 'we_1').pk,
        keys.webhookDeliveryWaiting({ mode: m, endpointId: 'we_1', createdAt: '2026-03-01T09:00:00.000Z', deliveryId: 'wd_1' }).pk,
      ]),
      recoveryUpdate: MODES.map((m) => keys.recoveryUpdate(m, COMPANY, 'upd-1').pk),
    };
    for (const [kind, pattern] of Object.entries(PARTITIONS)) {
      for (const [otherKind, pks] of Object.entries(items)) {
        for (const pk of pks) expect({ pattern, pk, matches: like(pattern, pk) }).toEqual({ pattern, pk, matches: kind === otherKind });
      }
    }
    expect(PARTITIONS).toEqual({
      apiKey: 'KEY#*',
      case: 'CASE#*',
      company: 'COMPANY#*',
      invoiceRefGuard: 'INVREF#*',
      idempotencyClaim: 'IDEMPOTENCY#*',
      referenceCounter: 'COUNTER#CASE_REFERENCE',
      upload: 'UPLOAD#*',
      event: 'EVENT#*',
      webhookEndpoints: 'WHEP#*',
      webhookDeliveries: 'WHD#*',
      webhookDeliverySlots: 'WHW#*',
      recoveryUpdate: 'RECOVERY#*',
    });
  });

  it('the case list\u2019s index pattern matches its partitions in both modes, and not the event list\u2019s', () => {
    const like = (pattern: string, value: string) => new RegExp(`^${pattern.replace(/[#]/g, '\\#').replace(/\*/g, '.*')}$`).test(value);
    for (const m of MODES) {
      expect(like(INDEX_PARTITIONS.caseList, keys.caseListPartition(m, COMPANY, 3))).toBe(true);
      expect(like(INDEX_PARTITIONS.caseList, keys.caseListing(m, COMPANY, '2025-06-01T10:00:00.000Z', CASE).gsi2pk)).toBe(true);
      expect(like(INDEX_PARTITIONS.caseList, keys.eventListPartition(m, COMPANY, 3))).toBe(false);
    }
  });

  it('the test helper\u2019s patterns match test cases, their records and test events, and no live item', () => {
    const like = (pattern: string, value: string) => new RegExp(`^${pattern.replace(/[#]/g, '\\#').replace(/\*/g, '.*')}$`).test(value);
    expect(TEST_PARTITIONS).toEqual({ case: 'CASE#TEST#*', event: 'EVENT#TEST#*', invoiceRefGuard: 'INVREF#TEST#*' });
    expect(like(TEST_PARTITIONS.case, keys.payment('test', CASE, 1).pk)).toBe(true);
    expect(like(TEST_PARTITIONS.invoiceRefGuard, keys.invoiceRefGuard('test', COMPANY, 'inv-1').pk)).toBe(true);
    expect(like(TEST_PARTITIONS.invoiceRefGuard, keys.invoiceRefGuard('live', COMPANY, 'inv-1').pk)).toBe(false);
    for (const key of [keys.case('test', CASE), keys.attestation('test', CASE)]) expect(like(TEST_PARTITIONS.case, key.pk)).toBe(true);
    expect(like(TEST_PARTITIONS.event, keys.event('test', EVENT).pk)).toBe(true);
    for (const key of [keys.case('live', CASE), keys.attestation('live', CASE)]) expect(like(TEST_PARTITIONS.case, key.pk)).toBe(false);
    expect(like(TEST_PARTITIONS.event, keys.event('live', EVENT).pk)).toBe(false);
  });

  it('the event list\u2019s index pattern matches its partitions in both modes, and not the case list\u2019s', () => {
    const like = (pattern: string, value: string) => new RegExp(`^${pattern.replace(/[#]/g, '\\#').replace(/\*/g, '.*')}$`).test(value);
    for (const m of MODES) {
      expect(like(INDEX_PARTITIONS.eventList, keys.eventListPartition(m, COMPANY, 3))).toBe(true);
      expect(like(INDEX_PARTITIONS.eventList, keys.eventListing(m, COMPANY, CASE, '2025-06-01T10:00:00.000Z', EVENT).gsi2pk)).toBe(true);
      expect(like(INDEX_PARTITIONS.eventList, keys.caseListPartition(m, COMPANY, 3))).toBe(false);
    }
  });
});
