import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Errors } from '@app/contracts';
import { ReadReplicas } from '@app/database';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { NamedColours } from './named-colours.service';

@Injectable()
export class FoldersService extends NamedColours {
  constructor(@InjectDataSource() dataSource: DataSource, reads: ReadReplicas, creates: IdempotentCreates) {
    super(dataSource, reads, creates, {
      created: 'folder',
      table: 'folders',
      assistantsCount: '(SELECT count(*) FROM assistants a WHERE a.folder_id = item.id)::int',
      noun: 'Folder',
      notFound: Errors.folderNotFound,
    });
  }
}
