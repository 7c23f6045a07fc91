import { Client, escapeIdentifier } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { entities } from './entities';
import { migrations } from './migrations';

export function dataSourceOptions(databaseUrl: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities,
    migrations,
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: { max: poolSize, application_name: 'voice-assistant-service' },
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
