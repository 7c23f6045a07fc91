import { QueryFailedError } from 'typeorm';

/** A write refused by a unique index: two requests raced to the same name, say. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string }).code === '23505';
}
