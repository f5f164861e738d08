import type { InvoiceFiles } from '../cases/ports.js';
import type { Deadline } from '../deadline.js';
import type { DynamoUploadRecords } from './dynamodb/upload-records.js';

/**
 * Batch creation's view of the invoice files: the upload records S3's events left in the table
 * (one BatchGetItem for the whole batch), and the object store itself (HEAD) for a file whose
 * record has not arrived yet.
 */
export class RecordedInvoiceFiles implements InvoiceFiles {
  constructor(
    private readonly records: Pick<DynamoUploadRecords, 'recorded'>,
    private readonly objects: Pick<InvoiceFiles, 'exists'>,
  ) {}

  recorded(fileKeys: readonly string[], deadline?: Deadline): Promise<ReadonlySet<string>> {
    return this.records.recorded(fileKeys, deadline);
  }

  exists(fileKey: string, deadline?: Deadline): Promise<boolean> {
    return this.objects.exists(fileKey, deadline);
  }
}
