import { Injectable } from '@nestjs/common';
import { Errors } from '@app/contracts';
import { LabelsRepository, Transactions } from '@app/database';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { NamedColours } from './named-colours.service';

@Injectable()
export class LabelsService extends NamedColours {
  constructor(labels: LabelsRepository, transactions: Transactions, creates: IdempotentCreates) {
    super(labels, transactions, creates, { created: 'label', noun: 'Label', notFound: Errors.labelNotFound });
  }
}
