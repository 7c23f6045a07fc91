import { randomBytes } from 'node:crypto';

/**
 * The server and base database of the run: DATABASE_URL, as for the service itself. Read when needed, not at
 * import: the global setup may first point it at the embedded PostgreSQL (scripts/local-services.js).
 */
const baseDatabaseUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/voice_assistant';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The seed nodes of the run's Redis Cluster (`npm run test:cluster`), set by the global setup; unset otherwise. */
export const REDIS_CLUSTER_NODES = (): string | undefined => process.env.REDIS_CLUSTER_NODES || undefined;
/**
 * The queue backend the run's API and worker use, as for the service: QUEUE_BACKEND, `redis` by default (the
 * global setup sets `postgres` when no Redis answers and none was asked for).
 */
export const queueBackend = (): 'redis' | 'postgres' =>
  process.env.QUEUE_BACKEND === 'postgres' ? 'postgres' : 'redis';
export const QUEUE_BACKEND = queueBackend();

/**
 * Names of what a run creates start with TEST_DATABASE_PREFIX, by default the DATABASE_URL's database name
 * followed by `_test_`. The rest of the name is unique to the run; a run drops only the one it created.
 */
export function uniqueRunName(): string {
  const prefix =
    process.env.TEST_DATABASE_PREFIX ??
    `${decodeURIComponent(new URL(baseDatabaseUrl()).pathname.slice(1)) || 'voice_assistant'}_test_`;
  return `${prefix}${Date.now()}_${randomBytes(4).toString('hex')}`;
}

export function databaseUrlFor(name: string): string {
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}
