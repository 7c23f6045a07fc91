import type { Pool } from 'pg';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';

/**
 * Runs one statement on the data source's own connection pool (the primary's), outside any transaction, and
 * returns its rows. `DataSource.query` answers the same rows but builds a query runner, broadcasts subscriber
 * events and times the statement on every call; for the statements every request runs (the credential lookup)
 * that is a measurable share of the request (docs/benchmarks.md, section 8). A failure is TypeORM's
 * `QueryFailedError` as `DataSource.query` throws it, so the error filter answers it the same way.
 */
export async function queryPool<Row>(dataSource: DataSource, text: string, values: unknown[]): Promise<Row[]> {
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  try {
    return (await pool.query(text, values)).rows as Row[];
  } catch (error) {
    throw new QueryFailedError(text, values, error as Error);
  }
}

/**
 * One statement's rows where `manager` runs its statements: on its transaction's connection when it has one, else
 * straight to the pool (`queryPool`). For statements that return rows, or whose answer is not read: inside a
 * transaction TypeORM answers an UPDATE or DELETE as `[rows, count]`.
 */
export function queryRows<Row>(manager: EntityManager, text: string, values: unknown[]): Promise<Row[]> {
  return manager.queryRunner
    ? (manager.query(text, values) as Promise<Row[]>)
    : queryPool<Row>(manager.connection, text, values);
}
