import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { isTransientConflict } from './query-errors';

/** Each open transaction's connection, kept off the handle: only the repositories here run statements on it. */
const managers = new WeakMap<Transaction, EntityManager>();

/** The connection a transaction's statements run on, for a repository joining it (`within`). */
export function managerOf(transaction: Transaction): EntityManager {
  const manager = managers.get(transaction);
  if (!manager) throw new Error('not a transaction Transactions opened');
  return manager;
}

/**
 * An open transaction, as `Transactions` hands it to the work run in it. Repositories join it with `within`; it
 * runs no statement of its own but the locks a write takes on the rows it references.
 */
export class Transaction {
  constructor(manager: EntityManager) {
    managers.set(this, manager);
  }

  /**
   * Locks the rows a write is about to reference (`FOR KEY SHARE`: a concurrent delete waits until the write has
   * committed, while other readers and writers of the rows go on) and returns the ids among `ids` that exist in
   * `table` for the account (any, with a null owner). Taking these locks before any row of the write itself keeps
   * one lock order across requests: a delete locks the row it deletes before the rows its foreign keys reach.
   */
  lockReferences(
    table: string,
    ids: readonly number[],
    ownerId: number | null,
    extraCondition = '',
  ): Promise<Set<number>> {
    return lockReferences(managerOf(this), table, ids, ownerId, extraCondition);
  }
}

/** `Transaction.lockReferences` on a connection, for the repositories that lock references themselves. */
export async function lockReferences(
  manager: EntityManager,
  table: string,
  ids: readonly number[],
  ownerId: number | null,
  extraCondition = '',
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows: { id: number }[] = await manager.query(
    `SELECT id FROM ${table} WHERE id = ANY($1::int[]) ${ownerId === null ? '' : 'AND user_id = $2'} ${extraCondition}
      ORDER BY id FOR KEY SHARE`,
    ownerId === null ? [ids] : [ids, ownerId],
  );
  return new Set(rows.map((row) => row.id));
}

/** Attempts of a transaction that Postgres failed as a deadlock victim or for a serialisation conflict. */
const TRANSACTION_ATTEMPTS = 3;

/** `Transactions.run` on a data source, for a repository's own multi-statement writes. */
export function runTransaction<T>(dataSource: DataSource, work: (transaction: Transaction) => Promise<T>): Promise<T> {
  return dataSource.transaction((manager) => work(new Transaction(manager)));
}

/** `Transactions.runRetrying` on a data source. */
export async function runRetryingTransaction<T>(
  dataSource: DataSource,
  work: (transaction: Transaction) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runTransaction(dataSource, work);
    } catch (error) {
      if (!isTransientConflict(error) || attempt >= TRANSACTION_ATTEMPTS) throw error;
    }
  }
}

/**
 * The one way into a transaction: `run` hands the work a `Transaction`, and each repository the work writes through
 * joins it with `within(transaction)` (`TenantRepository` and the SQL repositories alike), so their statements
 * commit or roll back together.
 */
@Injectable()
export class Transactions {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  run<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return runTransaction(this.dataSource, work);
  }

  /**
   * `run`, run again (three attempts at most) when Postgres fails the transaction to break a deadlock or a
   * serialisation conflict, so that racing requests are answered as if they had come one after the other. `work`
   * must do nothing but database writes (it may run more than once).
   */
  runRetrying<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return runRetryingTransaction(this.dataSource, work);
  }
}
