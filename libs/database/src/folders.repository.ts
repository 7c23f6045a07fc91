import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NamedColoursRepository, type NamedColourTable } from './named-colours.repository';
import { ReadReplicas } from './read-replicas';

@Injectable()
export class FoldersRepository extends NamedColoursRepository {
  protected readonly table: NamedColourTable = {
    name: 'folders',
    assistantsCount: '(SELECT count(*) FROM assistants a WHERE a.folder_id = item.id)::int',
  };

  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }
}
