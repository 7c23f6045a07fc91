import { DataSource } from 'typeorm';
import { dataSourceOptions, dropDatabase, ensureDatabase, migrations } from '@app/database';

/**
 * A deployment rolled back reverts its migrations newest first, and rolled forward again applies them anew: every
 * `down` must leave the schema as the migration found it, or the next `up` fails half way.
 */
describe('Migrations', () => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `${url.pathname}_migrations`;
  let dataSource: DataSource;

  beforeAll(async () => {
    await ensureDatabase(url.toString());
    dataSource = await new DataSource({ ...dataSourceOptions(url.toString(), 1), migrations }).initialize();
  }, 30_000);
  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(url.toString());
  });

  /** Every index, function, table and column, as names with their definitions. */
  const schema = async () =>
    (
      await dataSource.query(
        `SELECT 'index ' || indexname || ': ' || indexdef AS item FROM pg_indexes WHERE schemaname = 'public'
         UNION ALL
         SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
         UNION ALL
         SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(column_default, '')
           FROM information_schema.columns WHERE table_schema = 'public'
         ORDER BY 1`,
      )
    ).map((row: { item: string }) => row.item);

  it('reverts the twelve newest one by one and applies them again to the same schema', async () => {
    await dataSource.runMigrations({ transaction: 'each' });
    const applied = await schema();
    const reverted: string[] = [];
    for (let count = 0; count < 12; count++) {
      const [last] = await dataSource.query(`SELECT name FROM migrations ORDER BY id DESC LIMIT 1`);
      // Each migration says whether it runs in a transaction (concurrent index builds cannot).
      await dataSource.undoLastMigration({ transaction: 'none' });
      reverted.push(last.name);
    }
    const reapplied = await dataSource.runMigrations({ transaction: 'each' });
    expect(reapplied.map((migration) => migration.name)).toEqual(reverted.reverse());
    expect(await schema()).toEqual(applied);
  }, 120_000);
});
