import type { DataSource, EntityManager } from 'typeorm';
import type { ReadReplicas } from './read-replicas';
import { managerOf, runRetryingTransaction, runTransaction, type Transaction } from './transactions';

/**
 * A repository of one aggregate's tables in plain SQL: it owns their statements and row types, so the services that
 * use it hold only the domain's decisions and can be tested with a fake of it. Its statements run on the primary,
 * each on its own, or, joined to a transaction (`within`), on that transaction's connection; the account reads it
 * sends to a replica go through `reads` (the primary outside an API request).
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

  /** A write of this repository's own that takes several statements: `work` in a transaction of its own. */
  protected transaction<T>(work: (repository: this) => Promise<T>): Promise<T> {
    return runTransaction(this.dataSource, (transaction) => work(this.within(transaction)));
  }

  /** `transaction`, run again when Postgres fails it to break a deadlock (see `Transactions.runRetrying`). */
  protected retryingTransaction<T>(work: (repository: this) => Promise<T>): Promise<T> {
    return runRetryingTransaction(this.dataSource, (transaction) => work(this.within(transaction)));
  }

  /** Whether this repository's statements run in a transaction. */
  get inTransaction(): boolean {
    return this.manager.queryRunner?.isTransactionActive === true;
  }

  /** This repository in a transaction `Transactions` opened: its statements commit or roll back with the others. */
  within(transaction: Transaction): this {
    return Object.assign(Object.create(Object.getPrototypeOf(this) as object) as this, this, {
      manager: managerOf(transaction),
    });
  }
}
