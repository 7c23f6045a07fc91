#!/usr/bin/env node
// Creates the database when it is missing and applies pending migrations (which also seed reference data).
// Runs from the build: `npm run migrate` builds first.
const { loadConfig } = require('../dist/libs/config/src');
const { ensureDatabase, runMigrations } = require('../dist/libs/database/src');

async function migrate() {
  const config = loadConfig();
  const database = new URL(config.databaseUrl).pathname.slice(1);
  if (await ensureDatabase(config.databaseUrl)) console.log(`Created database "${database}".`);
  const applied = await runMigrations(config.databaseUrl);
  console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database schema is up to date.');
}

module.exports = { migrate };

if (require.main === module) {
  migrate().catch((error) => {
    console.error(error.message ?? error);
    process.exit(1);
  });
}
