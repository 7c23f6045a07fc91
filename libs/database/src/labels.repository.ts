import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NamedColoursRepository, type NamedColourTable } from './named-colours.repository';
import { ReadReplicas } from './read-replicas';

@Injectable()
export class LabelsRepository extends NamedColoursRepository {
  protected readonly table: NamedColourTable = {
    name: 'labels',
    assistantsCount: '(SELECT count(*) FROM assistant_labels l WHERE l.label_id = item.id)::int',
  };

  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }
}
