import { Injectable } from '@nestjs/common';
import { Errors } from '@app/contracts';
import { LabelsRepository } from '@app/database';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { NamedColours } from './named-colours.service';

@Injectable()
export class LabelsService extends NamedColours {
  constructor(labels: LabelsRepository, creates: IdempotentCreates) {
    super(labels, creates, { created: 'label', noun: 'Label', notFound: Errors.labelNotFound });
  }
}
