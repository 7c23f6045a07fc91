import { QueryFailedError } from 'typeorm';

/** A write refused by a unique index: two requests raced to the same name, say. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string }).code === '23505';
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
