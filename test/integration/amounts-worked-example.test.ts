import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { buildGetCaseHandler } from '../../functions/get-case.js';
import { buildRecordPaymentHandler } from '../../functions/record-payment.js';
import { paymentAdapters, tableAdapters } from '../../lib/adapters/production-adapters.js';
import { checkedInvoke } from '../support/contract.js';
import { outcome, postCases, uploadInvoice } from '../support/cases.js';
import { validCase } from '../support/case-inputs.js';
import { apiEvent, bearer, lambdaContext, newPartner, parse } from '../support/fixtures.js';

/**
 * docs/api.md, "Amounts", "A worked example": the service itself answers the figures the document
 * shows (test/unit/cases/amounts-worked-example.test.ts holds the document to the pure module; this
 * one holds it to what a partner reads). The example's facts go in through the real create and
 * payment handlers over DynamoDB Local, and GET is asked on the example's date: the handlers'
 * clock is the one thing set, to noon (London) of the example's `asOf`.
 */
const api = readFileSync(path.join(__dirname, '../../docs/api.md'), 'utf8');
const section = api.slice(api.indexOf('### A worked example'), api.indexOf('## Withdraw a case'));
const example = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!) as {
  principalAmount: string;
  dueDate: string;
  claimStatutoryInterest: boolean;
  payments: { amount: string; paidAt: string }[];
  amounts: Record<string, string | null>;
};

describe('The worked example of docs/api.md', () => {
  it('is what GET /api/v1/cases/{id} answers for a case with its facts, on its date', async () => {
    const partner = await newPartner(['cases:read', 'cases:write']);
    const fileKey = await uploadInvoice(partner.apiKey);
    const created = await postCases(partner.apiKey, {
      cases: [
        validCase(fileKey, {
          principalAmount: Number(example.principalAmount),
          dueDate: example.dueDate,
          invoiceDate: '2025-01-10',
          claimStatutoryInterest: example.claimStatutoryInterest,
        }),
      ],
    });
    expect(created.statusCode).toBe(201);
    const id = outcome(created).created[0]!.id;
    const onTheDay = () => new Date(`${example.amounts.asOf!}T11:00:00Z`);

    const pay = buildRecordPaymentHandler({ ...paymentAdapters(), now: onTheDay });
    for (const payment of example.payments) {
      const event = apiEvent({
        method: 'POST',
        path: `/api/v1/cases/${id}/payments`,
        resource: '/api/v1/cases/{id}/payments',
        pathParameters: { id },
        headers: { ...bearer(partner.apiKey), 'Content-Type': 'application/json' },
        body: JSON.stringify({ amount: Number(payment.amount), paidAt: payment.paidAt }),
      });
      expect(parse(await checkedInvoke(pay, event, lambdaContext())).statusCode).toBe(201);
    }

    const get = buildGetCaseHandler({ ...tableAdapters(), now: onTheDay });
    const read = parse(
      await checkedInvoke(
        get,
        apiEvent({
          method: 'GET',
          path: `/api/v1/cases/${id}`,
          resource: '/api/v1/cases/{id}',
          pathParameters: { id },
          headers: bearer(partner.apiKey),
        }),
        lambdaContext(),
      ),
    );
    expect(read.statusCode).toBe(200);
    expect(read.body.amounts).toEqual(example.amounts);
  }, 30_000);
});
