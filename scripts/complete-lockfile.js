#!/usr/bin/env node
// Run after changing dependencies: `npm install && node scripts/complete-lockfile.js`.
//
// Some packages ship native builds as per-platform optional dependencies (`foo-darwin-arm64`, ...). When the
// registry in use serves only this machine's platform builds, npm cannot record the others in
// package-lock.json, and `npm ci` then refuses the lockfile as out of sync. This adds the missing entries,
// marked optional with their os and cpu, so `npm ci` accepts the lockfile and skips them on other platforms.
const fs = require('node:fs');
const path = require('node:path');

const PLATFORM = /-(darwin|linux|win32|freebsd|openbsd|netbsd|android|openharmony|sunos|aix)-([a-z0-9]+)/;
const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));

const added = [];
for (const meta of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const platform = PLATFORM.exec(name);
    if (lock.packages[key] || !platform) continue;
    lock.packages[key] = { version, cpu: [platform[2]], os: [platform[1]], optional: true, ...(meta.dev ? { dev: true } : {}) };
    added.push(name);
  }
}

const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(lockPath, JSON.stringify({ ...lock, packages: sorted }, null, 2) + '\n');
console.log(added.length ? `Added ${added.length} platform entries: ${added.join(', ')}` : 'Lockfile already complete.');
