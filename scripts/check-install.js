#!/usr/bin/env node
// What keeps `npm ci` free of warnings on every Node version package.json's `engines` admits, on this platform,
// checked from the lockfile alone (`.ci/run` runs it, and fails on any warning of the install itself):
// - every locked package's own `engines.node` admits the oldest version of each line `engines` names (20.19.0, ...),
//   or `npm ci` on that line warns EBADENGINE;
// - every locked package with an install script has an `allowScripts` entry (allowed or denied), or npm lists it as
//   not yet reviewed.
const path = require('node:path');
const semver = require('semver');

/**
 * Packages whose `engines` says nothing of where they run: bundled into a browser page, never run by Node (their
 * `npm ci` warning is expected, and harmless).
 */
const BROWSER_ONLY = { 'examples/web-call': ['machina'] };

/** The problems of one package directory (package.json and its lockfile). */
function problemsOf(directory, browserOnly = []) {
  const pkg = require(path.join(directory, 'package.json'));
  const lock = require(path.join(directory, 'package-lock.json'));
  const oldest = pkg.engines.node.split('||').map((range) => semver.minVersion(range.trim()).version);
  const problems = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (!where) continue;
    // A build for another platform, which npm ci skips here as it is told to (`os`, `cpu`).
    if (entry.os && !entry.os.includes(process.platform)) continue;
    if (entry.cpu && !entry.cpu.includes(process.arch)) continue;
    const name = where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const wanted = entry.engines?.node;
    if (typeof wanted === 'string' && !browserOnly.includes(name))
      for (const version of oldest)
        if (!semver.satisfies(version, wanted))
          problems.push(`${name}@${entry.version} wants Node ${wanted}; engines admits ${version}`);
    if (entry.hasInstallScript && !(name in (pkg.allowScripts ?? {})))
      problems.push(`${name}@${entry.version} has an install script that allowScripts neither allows nor denies`);
  }
  return { problems, packages: Object.keys(lock.packages).length - 1, oldest };
}

let failed = false;
// The service, and the reference agent and the web-call page that `npm run test:e2e` installs.
for (const directory of ['.', 'examples/livekit-agent', 'examples/web-call']) {
  const { problems, packages, oldest } = problemsOf(path.join(__dirname, '..', directory), BROWSER_ONLY[directory]);
  if (problems.length > 0) {
    failed = true;
    console.error(`check-install: ${directory}: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
  } else
    console.log(
      `check-install: ${directory}: ${packages} locked packages agree with engines (${oldest.join(', ')}) and allowScripts`,
    );
}
process.exit(failed ? 1 : 0);
