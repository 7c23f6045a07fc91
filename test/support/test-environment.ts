import { randomBytes } from 'node:crypto';

/** Databases this suite creates start with this, followed by a timestamp, so stale ones can be found. */
export const TEST_DATABASE_PREFIX = 'va_test_';

export const BASE_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniqueRunName(): string {
  return `${TEST_DATABASE_PREFIX}${Date.now()}_${randomBytes(3).toString('hex')}`;
}

export function databaseUrlFor(name: string): string {
  const url = new URL(BASE_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
