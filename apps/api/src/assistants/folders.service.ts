import { Injectable } from '@nestjs/common';
import { Errors } from '@app/contracts';
import { FoldersRepository, Transactions } from '@app/database';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { NamedColours } from './named-colours.service';

@Injectable()
export class FoldersService extends NamedColours {
  constructor(folders: FoldersRepository, transactions: Transactions, creates: IdempotentCreates) {
    super(folders, transactions, creates, { created: 'folder', noun: 'Folder', notFound: Errors.folderNotFound });
  }
}
