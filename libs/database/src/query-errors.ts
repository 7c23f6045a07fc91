import { QueryFailedError } from 'typeorm';

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
