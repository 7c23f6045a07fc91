import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Errors } from '@app/contracts';
import { ReadReplicas } from '@app/database';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { NamedColours } from './named-colours.service';

@Injectable()
export class LabelsService extends NamedColours {
  constructor(@InjectDataSource() dataSource: DataSource, reads: ReadReplicas, creates: IdempotentCreates) {
    super(dataSource, reads, creates, {
      created: 'label',
      table: 'labels',
      assistantsCount: '(SELECT count(*) FROM assistant_labels l WHERE l.label_id = item.id)::int',
      noun: 'Label',
      notFound: Errors.labelNotFound,
    });
  }
}
