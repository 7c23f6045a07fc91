import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@app/database';
import { dropDatabase, ensureDatabase } from '../libs/database/src/data-source-options';
import { migrations } from '../libs/database/src/migrations';
async function main() {
  const url = 'postgres://postgres@127.0.0.1:5432/va_updown_probe';
  await ensureDatabase(url);
  try {
    const ds = await new DataSource({ ...dataSourceOptions(url, 1), migrations, logging: false }).initialize();
    await ds.runMigrations({ transaction: 'each' });
    for (let i = 0; i < Number(process.argv[2]); i++) await ds.undoLastMigration({ transaction: 'none' });
    const applied = await ds.runMigrations({ transaction: 'each' });
    console.log('re-applied', applied.map((m) => m.name).join(', '));
    console.log((await ds.query(`SELECT count(*) FROM search_related_lexemes WHERE lexeme LIKE '% %'`))[0]);
    await ds.destroy();
  } finally {
    await dropDatabase(url);
  }
}
main().catch((e) => { console.error('FAILED', e.message, e.query?.slice(0, 200)); process.exit(1); });
