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
const { loadDatabaseUrl } = require('../dist/libs/config/src');
const { ensureDatabase, runMigrations } = require('../dist/libs/database/src');

async function migrate() {
  // Only DATABASE_URL: migrating needs no key, no Redis, in production too.
  const databaseUrl = loadDatabaseUrl();
  const database = new URL(databaseUrl).pathname.slice(1);
  try {
    if (await ensureDatabase(databaseUrl)) console.log(`Created database "${database}".`);
  } catch (error) {
    // pg's own words for a server that wants a password the URL does not carry name neither the cause nor the fix.
    if (/SASL|password/i.test(error.message)) {
      const { host } = new URL(databaseUrl);
      throw new Error(
        `The PostgreSQL at ${host} asks for a password that DATABASE_URL does not give (or gives wrongly): ` +
          `set DATABASE_URL=postgres://USER:PASSWORD@${host}/${database}`,
        { cause: error },
      );
    }
    throw error;
  }
  const applied = await runMigrations(databaseUrl);
  console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database schema is up to date.');
}

module.exports = { migrate };

if (require.main === module) {
  migrate().catch((error) => {
    console.error(error.message ?? error);
    process.exit(1);
  });
}
