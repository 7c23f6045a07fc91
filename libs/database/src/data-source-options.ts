import { Client, escapeIdentifier } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { BoundedClient } from './bounded-client';
import { entities } from './entities';
import { migrations } from './migrations';

/** How long a pool waits on Postgres (see `DependencyTimeouts`); without them it waits as long as the server takes. */
export interface PoolBounds {
  /** Getting a connection, from the pool or a new one. */
  connectMs: number;
  /** A statement's answer; unset for work that may legitimately run long (the worker's, migrations). */
  statementMs?: number;
}

export function dataSourceOptions(databaseUrl: string, poolSize = 10, bounds?: PoolBounds): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities,
    migrations,
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: {
      max: poolSize,
      application_name: 'voice-assistant-service',
      ...(bounds ? { connectionTimeoutMillis: bounds.connectMs } : {}),
      // Client-side, so it also holds for a server that does not answer at all (a server-side statement_timeout
      // would need that server; and PgBouncer refuses it as a startup parameter).
      ...(bounds?.statementMs ? { query_timeout: bounds.statementMs, Client: BoundedClient } : {}),
    },
  };
}

function databaseName(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
}

/** Connects to the server's maintenance database, so a database can be created or dropped. */
async function withMaintenanceClient<T>(databaseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates the database named in the URL when it does not exist yet. Returns true when it was created. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = databaseName(databaseUrl);
  return withMaintenanceClient(databaseUrl, async (client) => {
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (existing.rowCount) return false;
    await client.query(`CREATE DATABASE ${escapeIdentifier(name)}`);
    return true;
  });
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = databaseName(databaseUrl);
  await withMaintenanceClient(databaseUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(name)} WITH (FORCE)`),
  );
}

/** Applies pending migrations; returns the names of those applied. */
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(databaseUrl, 1));
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
