import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A new call was refused: the account has as many calls in progress as it may (`maxConcurrentCalls`). */
export class CallLimitReached {
  constructor(readonly maxConcurrentCalls: number) {}
}

/**
 * The account's slot row (see the `account_call_slots` migration), locked until the statement's transaction ends,
 * as a CTE named `slot`: `max_concurrent_calls`, the account's limit (its own, else `defaultLimit`, an SQL
 * parameter), `free`, how many more calls it may start now, and `user_id`. A writer that waited for the lock reads
 * the row as the previous holder left it, so a statement that creates its calls only within `free` never takes a
 * slot another took first.
 */
export function lockedCallSlot(userId: string, defaultLimit: string): string {
  return `slot AS (
      SELECT user_id, COALESCE(max_concurrent_calls, ${defaultLimit}::int) AS max_concurrent_calls,
             GREATEST(COALESCE(max_concurrent_calls, ${defaultLimit}::int) - in_progress, 0) AS free
        FROM account_call_slots WHERE user_id = ${userId}::int
         FOR UPDATE)`;
}

/** What an account's calls in progress are measured against. */
export interface AccountCallLimitRow {
  user_id: number;
  in_progress: number;
  /** The account's own limit; null: the deployment's. */
  max_concurrent_calls: number | null;
}

/** An operator's view of the accounts' call limits (the CLI's). */
@Injectable()
export class AccountCallSlotsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Sets the account's own limit, or (null) gives it the deployment's again; answers the row as saved. */
  async setLimit(userId: number, maxConcurrentCalls: number | null): Promise<AccountCallLimitRow> {
    const [row] = (await this.manager.query(
      `INSERT INTO account_call_slots AS slots (user_id, max_concurrent_calls) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET max_concurrent_calls = EXCLUDED.max_concurrent_calls
       RETURNING user_id, in_progress, max_concurrent_calls`,
      [userId, maxConcurrentCalls],
    )) as AccountCallLimitRow[];
    return row;
  }
}
