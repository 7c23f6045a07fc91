import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** The tables of tokens that stop opening anything at their `expires_at`: sessions' and calls'. */
export const EXPIRING_TOKEN_TABLES = ['session_tokens', 'call_tokens'] as const;
export type ExpiringTokenTable = (typeof EXPIRING_TOKEN_TABLES)[number];

/**
 * Expired session and call tokens, which are refused when presented anyway: the worker's maintenance removes them so
 * their tables do not grow without bound. Every account's at once: the system's own statement.
 */
@Injectable()
export class ExpiringTokensRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Deletes the table's expired tokens and answers how many. */
  purgeExpired(table: ExpiringTokenTable): Promise<number> {
    return this.changed(`DELETE FROM ${table} WHERE expires_at <= now()`, []);
  }
}
