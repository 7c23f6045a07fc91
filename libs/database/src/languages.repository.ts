import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Language } from './entities/language.entity';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** The languages, reference data every account shares (seeded by a migration): no statement takes an owner. */
@Injectable()
export class LanguagesRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Every language, by name. */
  list(): Promise<Language[]> {
    return this.manager.getRepository(Language).find({ order: { name: 'ASC', id: 'ASC' } });
  }

  async exists(id: number): Promise<boolean> {
    const [found] = (await this.manager.query(`SELECT 1 FROM languages WHERE id = $1`, [id])) as unknown[];
    return found !== undefined;
  }
}
