#!/usr/bin/env node
// Creates the database when it is missing and applies pending migrations (which also seed reference data).
// Runs from the build alone, so it works in a production install without devDependencies; in a source
// checkout run `npm run build` first (`npm start` does both).
const fs = require('node:fs');
const path = require('node:path');

if (!fs.existsSync(path.join(__dirname, '..', 'dist', 'libs', 'database', 'src', 'index.js'))) {
  console.error('No build found in dist/: run `npm run build` first.');
  process.exit(1);
}
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
