import type { DataSource, EntityManager } from 'typeorm';
import { retryingTransaction } from './query-errors';
import type { ReadReplicas } from './read-replicas';

/**
 * A repository of one aggregate's tables in plain SQL: it owns their statements and row types, so the services that
 * use it hold only the domain's decisions and can be tested with a fake of it. Its statements run on the primary,
 * each on its own, or, in `transaction`, on that transaction's connection; the account reads it sends to a replica
 * go through `reads` (the primary outside an API request).
 */
export abstract class SqlRepository {
  /** Where statements run: the data source's own manager, or a transaction's (`within`). */
  protected manager: EntityManager;

  constructor(
    protected readonly dataSource: DataSource,
    protected readonly reads: ReadReplicas,
  ) {
    this.manager = dataSource.manager;
  }

  /** Runs an UPDATE or DELETE and answers how many rows it changed. */
  protected async changed(sql: string, parameters: unknown[]): Promise<number> {
    const [, count] = (await this.manager.query(sql, parameters)) as [unknown, number];
    return count;
  }

  /** Runs `work` in one transaction, with this repository on its connection. */
  transaction<T>(work: (repository: this) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(this.within(manager)));
  }

  /** `transaction`, run again when Postgres fails it to break a deadlock (see `retryingTransaction`). */
  retryingTransaction<T>(work: (repository: this) => Promise<T>): Promise<T> {
    return retryingTransaction(this.dataSource, (manager) => work(this.within(manager)));
  }

  /** Whether this repository's statements run in a transaction. */
  get inTransaction(): boolean {
    return this.manager.queryRunner?.isTransactionActive === true;
  }

  /** This repository in the transaction another repository (or a manager) is in: a write across aggregates. */
  within(transaction: SqlRepository | EntityManager): this {
    const manager = transaction instanceof SqlRepository ? transaction.manager : transaction;
    return Object.assign(Object.create(Object.getPrototypeOf(this) as object) as this, this, { manager });
  }
}
