import { createHash, createHmac } from 'node:crypto';
import { TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DynamoCaseWriter } from '../../../lib/adapters/dynamodb/case-writer.js';
import { EVENT_RETENTION_SECONDS, keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { buildCaseEvent } from '../../../lib/cases/case-lifecycle.js';
import { toCaseView, type StoredCase } from '../../../lib/cases/case-record.js';
import type { Mode } from '../../../lib/mode.js';
import type { NewCase } from '../../../lib/cases/ports.js';
import { capturingDynamoClient, type SentRequest } from '../../support/capturing-dynamodb-client.js';

function newCase(i: number, mode: Mode, extra: Partial<StoredCase> = {}): NewCase {
  const caseId = `case_${String(i).padStart(22, 'A')}`;
  const stored: StoredCase = {
    caseId,
    companyId: 'cmp_0123456789abcdef',
    reference: `PC-${i}`,
    status: 'DRAFT',
    recoveryGate: 'AWAITING_CONFIRMATION',
    currency: 'GBP',
    createdAt: '2026-11-23T08:00:00.000Z',
    updatedAt: '2026-11-23T08:00:00.000Z',
    createdByKeyId: 'key_1',
    requestId: 'req-1',
    mode,
    debtorVerification: { status: i % 2 === 0 ? 'PENDING' : 'NOT_REQUESTED' },
    statusHistory: [{ status: 'DRAFT', at: '2026-11-23T08:00:00.000Z' }],
    debtorName: ['Acme Ltd', 'Zoë & Søn "Ltd" 🧾', '', 'line\u2028sep'][i % 4]!,
    debtorEmail: 'ap@acme.example',
    invoiceRef: `INV-${i}`,
    invoiceRefKey: `inv-${i}`,
    invoiceDate: '2026-01-10',
    dueDate: '2026-02-10T09:00:00+01:00',
    principalPence: 125050 + i,
    invoiceFileKey: 'invoices/cmp_0123456789abcdef/f.pdf',
    ...(i % 2 === 0 ? { debtorCompanyNo: '01234567' } : {}),
    ...extra,
  };
  return {
    stored,
    audit: {
      caseId,
      companyId: stored.companyId,
      mode,
      b2b: true,
      under10k: true,
      within6years: true,
      undisputed: i % 3 !== 0,
      attestedBy: 'Jane Smith',
      attestedAt: stored.createdAt,
      keyId: 'key_1',
      requestId: 'req-1',
      sourceIp: '203.0.113.9',
      ...(i % 2 ? { userAgent: 'erp/1.0' } : {}),
    },
    event: buildCaseEvent(toCaseView(stored), stored.createdAt),
  };
}

async function transactionOf(cases: NewCase[]): Promise<TransactWriteItemsCommand> {
  const sent: TransactWriteItemsCommand[] = [];
  const stub = { send: (command: TransactWriteItemsCommand) => (sent.push(command), Promise.resolve({})) };
  await new DynamoCaseWriter(stub as unknown as DynamoDBDocumentClient, 'partner-cases').writeAll(cases);
  expect(sent).toHaveLength(1);
  return sent[0]!;
}

describe("a batch's transaction as the case writer sends it", () => {
  it.each(['live', 'test'] as const)(
    'stores, for each %s case, its guard, the case, its audit record and its case.created event with exactly these attributes',
    async (mode) => {
      const cases = [0, 1, 2, 3].map((i) => newCase(i, mode, i === 3 ? { description: undefined } : {}));
      const { input } = await transactionOf(cases);
      const items = input.TransactItems!.map((action) => unmarshall(action.Put!.Item!));
      expect(items).toHaveLength(cases.length * 4);
      cases.forEach(({ stored, audit, event }, k) => {
        const [guard, record, attestation, eventRecord] = items.slice(k * 4, k * 4 + 4);
        const listing = (key: { pk: string; sk: string }) =>
          mode === 'test' ? { gsi1pk: `TESTDATA#${stored.companyId}`, gsi1sk: `${key.pk}#${key.sk}` } : {};
        const guardKey = keys.invoiceRefGuard(mode, stored.companyId, stored.invoiceRefKey);
        expect(guard).toEqual({
          ...guardKey,
          ...listing(guardKey),
          type: 'INVOICE_REF_GUARD',
          companyId: stored.companyId,
          invoiceRef: stored.invoiceRef,
          caseId: stored.caseId,
          reference: stored.reference,
          createdAt: stored.createdAt,
        });
        const caseKey = keys.case(mode, stored.caseId);
        const { description: _absent, ...storedAttributes } = stored;
        expect(record).toEqual({
          ...caseKey,
          ...listing(caseKey),
          ...keys.caseListing(mode, stored.companyId, stored.createdAt, stored.caseId),
          type: 'CASE',
          ...storedAttributes,
        });
        const auditKey = keys.attestation(mode, stored.caseId);
        expect(attestation).toEqual({ ...auditKey, ...listing(auditKey), type: 'ATTESTATION', ...audit });
        const eventKey = keys.event(mode, event.id);
        expect(eventRecord).toEqual({
          ...eventKey,
          ...listing(eventKey),
          ...keys.eventListing(mode, stored.companyId, stored.caseId, stored.createdAt, event.id),
          type: 'EVENT',
          eventId: event.id,
          eventType: 'case.created',
          companyId: stored.companyId,
          caseId: stored.caseId,
          mode,
          createdAt: stored.createdAt,
          payload: JSON.stringify(event),
          ttl: Date.parse(stored.createdAt) / 1000 + EVENT_RETENTION_SECONDS,
        });
        expect(JSON.parse(eventRecord!.payload as string)).toEqual({
          id: event.id,
          type: 'case.created',
          createdAt: stored.createdAt,
          livemode: mode === 'live',
          data: { object: toCaseView(stored) },
        });
      });
      expect(input.TransactItems!.every((action) => action.Put!.ConditionExpression === 'attribute_not_exists(pk)')).toBe(true);
      expect(
        input.TransactItems!.map((action, i) => [i % 4, action.Put!.ReturnValuesOnConditionCheckFailure]).filter(([, r]) => r),
      ).toEqual(cases.map(() => [0, 'ALL_OLD']));
    },
  );

  it('goes on the wire as the same JSON the DocumentClient would have sent for those items', async () => {
    const command = await transactionOf([0, 1, 2, 3, 4, 5, 6].map((i) => newCase(i, i % 2 ? 'test' : 'live')));
    const writerPath = capturingDynamoClient();
    await writerPath.client.send(command);
    const documentPath = capturingDynamoClient();
    const doc = DynamoDBDocumentClient.from(documentPath.client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
    await doc.send(
      new TransactWriteCommand({
        ClientRequestToken: command.input.ClientRequestToken!,
        TransactItems: command.input.TransactItems!.map(({ Put }) => ({ Put: { ...Put!, Item: unmarshall(Put!.Item!) } })),
      }),
    );
    expect(JSON.parse(writerPath.sent[0]!.body)).toEqual(JSON.parse(documentPath.sent[0]!.body));
    writerPath.client.destroy();
    documentPath.client.destroy();
  });

  it("goes on the wire exactly as the SDK's own serializer writes that input, signed over the body sent", async () => {
    const command = await transactionOf([0, 1, 2].map((i) => newCase(i, 'live')));
    const writer = capturingDynamoClient();
    await writer.client.send(command);
    const sdk = capturingDynamoClient();
    await sdk.client.send(new TransactWriteItemsCommand(command.input));
    const [sent] = writer.sent as [SentRequest];
    expect(sent.body).toBe(sdk.sent[0]!.body);
    expect(sent.headers['x-amz-target']).toBe('DynamoDB_20120810.TransactWriteItems');
    // The signature is recomputed over the body: it matches the one sent, and a changed body would not.
    expect(await signatureOver(sent, sent.body)).toBe(signatureIn(sent));
    expect(await signatureOver(sent, sent.body.replace('INV-1', 'INV-9'))).not.toBe(signatureIn(sent));
    writer.client.destroy();
    sdk.client.destroy();
  });
});

/** SHA-256 for the signer, from node:crypto (HMAC when given a key). */
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData) {
    this.hash.update(bytes(data));
  }
  digest() {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

const bytes = (data: SourceData) =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

const signatureIn = (request: SentRequest) => /Signature=([0-9a-f]+)/.exec(request.headers.authorization ?? '')?.[1];

/**
 * SigV4 of a captured request with the given body, as the capturing client's credentials sign it.
 * The SDK signs the payload through its `x-amz-content-sha256` header: it is recomputed from the body.
 */
async function signatureOver(request: SentRequest, body: string): Promise<string | undefined> {
  const { authorization: _signature, ...sent } = request.headers;
  const headers: Record<string, string> = { ...sent, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') };
  const stamp = headers['x-amz-date']!;
  const signingDate = new Date(
    `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
  );
  const signer = new SignatureV4({
    service: 'dynamodb',
    region: 'eu-west-2',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    sha256: Sha256,
  });
  const signed = await signer.sign(
    { method: 'POST', protocol: 'https:', hostname: headers.host!, path: '/', query: {}, headers, body },
    { signingDate },
  );
  return signatureIn({ headers: signed.headers, body });
}
