import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/**
 * What the local telephony adapter's call control was asked to do and how it answered: the system's own record for
 * development and tests (no account's data), in Postgres so every API and worker process, and every test, sees it.
 */
@Injectable()
export class LocalCallControlRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  async record(entry: { operation: string; room: string; request: object; outcome: object | null }): Promise<void> {
    await this.manager.query(
      `INSERT INTO local_call_control_requests (operation, room, request, outcome) VALUES ($1, $2, $3, $4)`,
      [entry.operation, entry.room, JSON.stringify(entry.request), entry.outcome && JSON.stringify(entry.outcome)],
    );
  }
}
