#!/usr/bin/env node
// Run after changing dependencies: `npm install && node scripts/complete-lockfile.js`.
//
// Some packages ship native builds as per-platform optional dependencies (`foo-darwin-arm64`, ...). When the
// registry in use serves only this machine's platform builds, npm cannot record the others in
// package-lock.json, and `npm ci` then refuses the lockfile as out of sync. This adds the missing entries,
// marked optional with their os and cpu, so `npm ci` accepts the lockfile and skips them on other platforms.
//
// Each added entry is pinned (`resolved` and `integrity`) from the registry's own metadata when the registry
// serves that version. One it does not serve cannot be pinned here: npm on that platform would fetch it by
// version without an integrity to check. The script lists every such entry and exits 1, so nobody adopts them
// unknowingly; pass --accept-unpinned to write them anyway (see docs/contributing.md, "Dependencies").
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const PLATFORM = /-(darwin|linux|win32|freebsd|openbsd|netbsd|android|openharmony|sunos|aix)-([a-z0-9]+)/;
const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const acceptUnpinned = process.argv.includes('--accept-unpinned');

/** The registry's `dist` of one version, or undefined when the registry does not serve it. */
function registryDist(name, version) {
  try {
    const output = execFileSync('npm', ['view', `${name}@${version}`, 'dist', '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const dist = JSON.parse(output || 'null');
    return dist && dist.integrity && dist.tarball ? dist : undefined;
  } catch {
    return undefined;
  }
}

const pinned = [];
const unpinned = [];
for (const meta of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const platform = PLATFORM.exec(name);
    if (!platform) continue;
    const existing = lock.packages[key];
    if (existing && existing.integrity) continue;
    const dist = registryDist(name, existing?.version ?? version);
    lock.packages[key] = {
      version: existing?.version ?? version,
      ...(dist ? { resolved: dist.tarball, integrity: dist.integrity } : {}),
      cpu: [platform[2]],
      os: [platform[1]],
      optional: true,
      ...(meta.dev ? { dev: true } : {}),
    };
    (dist ? pinned : unpinned).push(`${name}@${lock.packages[key].version}`);
  }
}

if (unpinned.length > 0 && !acceptUnpinned) {
  console.error(
    `Cannot pin ${unpinned.length} platform build(s): the configured registry does not serve them, so no ` +
      `integrity can be recorded:\n  ${unpinned.join('\n  ')}\n` +
      'Nothing was written. Re-run with --accept-unpinned to record them without integrity (npm on those ' +
      'platforms would then fetch them by version, unchecked), or run this where the registry serves them.',
  );
  process.exit(1);
}

const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(lockPath, JSON.stringify({ ...lock, packages: sorted }, null, 2) + '\n');
console.log(`Pinned ${pinned.length} platform build(s)${pinned.length ? `: ${pinned.join(', ')}` : ''}.`);
if (unpinned.length > 0) console.warn(`Recorded WITHOUT integrity (accepted): ${unpinned.join(', ')}`);
