import type { DataSource, EntityManager } from 'typeorm';
import { queryRows } from './pool-query';
import { noteAccountWrite, type ReadReplicas } from './read-replicas';
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

  /**
   * A statement's rows: on the transaction's connection when this repository is in one, else straight to the
   * primary's pool (`queryPool`, without the query runner TypeORM builds for each statement); see `queryRows`.
   */
  protected rowsOf<Row>(sql: string, parameters: unknown[]): Promise<Row[]> {
    return queryRows<Row>(this.manager, sql, parameters);
  }

  /**
   * A write the request makes for an account it does not act as (the voice runtime acts for none): `sql` returns,
   * beside its rows, `written_for`, the account it wrote (null: it wrote nothing), and each is noted so that account's
   * next reads find the write (see `ReadReplicas`); the rows come back without it. The caller's own writes need
   * nothing: the API records them itself.
   */
  protected async writeForAccount<Row extends object>(sql: string, parameters: unknown[]): Promise<Row[]> {
    const rows = await this.rowsOf<Row & { written_for: number | null }>(sql, parameters);
    return rows.map(({ written_for: account, ...row }) => {
      if (account !== null) noteAccountWrite(account);
      return row as unknown as Row;
    });
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
