import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoUploadRecords } from '../../../lib/adapters/dynamodb/upload-records.js';
import { keys } from '../../../lib/adapters/dynamodb/table-keys.js';
import { standaloneDeadline } from '../../../lib/deadline.js';

/** A client that answers BatchGetItem from a script: the way to make DynamoDB shed load on cue. */
function scripted(answers: ((keys: { pk: string }[]) => { found: string[]; removed?: string[]; unprocessed: { pk: string }[] })[]) {
  const asked: number[] = [];
  const send = async (command: { input: { RequestItems: Record<string, { Keys: { pk: string }[] }> } }) => {
    const wanted = Object.values(command.input.RequestItems)[0]!.Keys;
    asked.push(wanted.length);
    const answer = (answers[asked.length - 1] ?? answers[answers.length - 1]!)(wanted);
    const items = [
      ...answer.found.map((fileKey) => ({ fileKey, state: 'present' })),
      ...(answer.removed ?? []).map((fileKey) => ({ fileKey, state: 'removed' })),
    ];
    return { Responses: { t: items }, UnprocessedKeys: answer.unprocessed.length ? { t: { Keys: answer.unprocessed } } : {} };
  };
  return { client: { send } as unknown as DynamoDBDocumentClient, asked };
}

const A = 'invoices/cmp_AAAAAAAAAAAAAAAA/a.pdf';
const B = 'invoices/cmp_AAAAAAAAAAAAAAAA/b.pdf';

describe('reading upload records in one batch', () => {
  it('asks again for the keys DynamoDB left unprocessed, and only those', async () => {
    const { client, asked } = scripted([() => ({ found: [A], unprocessed: [keys.upload(B)] }), () => ({ found: [B], unprocessed: [] })]);
    expect(await new DynamoUploadRecords(client, 't').recorded([A, B])).toEqual(new Set([A, B]));
    expect(asked).toEqual([2, 1]);
  });

  it('gives up as unavailable when DynamoDB keeps shedding the read, rather than asking forever', async () => {
    const { client, asked } = scripted([(wanted) => ({ found: [], unprocessed: wanted })]);
    await expect(new DynamoUploadRecords(client, 't').recorded([A])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(asked).toHaveLength(5);
  });

  it('counts only records that say the object is present: a tombstone vouches for nothing', async () => {
    const { client } = scripted([() => ({ found: [A], removed: [B], unprocessed: [] })]);
    expect(await new DynamoUploadRecords(client, 't').recorded([A, B])).toEqual(new Set([A]));
  });

  it('asks again only within the request’s shared retry budget, like every other retry (one retry layer)', async () => {
    const { client, asked } = scripted([(wanted) => ({ found: [], unprocessed: wanted })]);
    const deadline = standaloneDeadline();
    deadline.retries.left = 1;
    await expect(new DynamoUploadRecords(client, 't').recorded([A], deadline)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(asked).toHaveLength(2);
    expect(deadline.retries.left).toBe(0);
  });
});
