import { type DataSource, type EntityManager, QueryFailedError } from 'typeorm';

/** The SQLSTATE of a failed query, if it is one. */
export function sqlState(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
}

/** A write refused by a unique index: two requests raced to the same name, say. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

/** A write referred to a row that no longer exists (deleted since it was read). */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === '23503';
}

/** Postgres broke a deadlock or a serialisation conflict by failing this transaction; running it again is safe. */
export function isTransientConflict(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40P01' || code === '40001';
}

/**
 * Runs a write whose uniqueness was checked first; if a concurrent request won the race, the unique index refuses
 * the write and the caller answers as if its own check had found the clash.
 */
export async function whenUnique<T>(work: () => Promise<T>, clash: () => Error): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error)) throw clash();
    throw error;
  }
}

/** Attempts of a transaction that Postgres failed as a deadlock victim or for a serialisation conflict. */
const TRANSACTION_ATTEMPTS = 3;

/**
 * A transaction that is run again when Postgres fails it to break a deadlock or a serialisation conflict, so
 * that racing requests are answered as if they had come one after the other. `work` must do nothing but
 * database writes (it may run more than once).
 */
export async function retryingTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await dataSource.transaction(work);
    } catch (error) {
      if (!isTransientConflict(error) || attempt >= TRANSACTION_ATTEMPTS) throw error;
    }
  }
}

/**
 * Locks the rows a write is about to reference (`FOR KEY SHARE`: a concurrent delete waits until the write has
 * committed, while other readers and writers of the rows go on) and returns the ids among `ids` that exist in
 * `table` for the account. Taking these locks before any row of the write itself keeps one lock order across
 * requests: a delete locks the row it deletes before the rows its foreign keys reach.
 */
export async function lockReferences(
  manager: EntityManager,
  table: string,
  ids: readonly number[],
  userId: number | null,
  extraCondition = '',
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows: { id: number }[] = await manager.query(
    `SELECT id FROM ${table} WHERE id = ANY($1::int[]) ${userId === null ? '' : 'AND user_id = $2'} ${extraCondition}
      ORDER BY id FOR KEY SHARE`,
    userId === null ? [ids] : [ids, userId],
  );
  return new Set(rows.map((row) => row.id));
}
