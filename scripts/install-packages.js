#!/usr/bin/env node
// Installs the repository's packages of their own, each with its own lockfile, when its node_modules is missing or
// older than its lockfile: the reference LiveKit agent (examples/livekit-agent) and the TypeScript SDK
// (sdk/typescript). `npm run typecheck` and `npm run test:e2e` run it first, so a fresh clone needs nothing more than
// `npm ci`, while the service's own install (and its image) stays without the agent's 280 MB of LiveKit, OpenAI and
// Deepgram packages and without the SDK's generator.
//
//   node scripts/install-packages.js [directory...]   (all of them when none is named)
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const PACKAGES = {
  'examples/livekit-agent': 'the LiveKit agent example',
  'sdk/typescript': 'the TypeScript SDK',
};

const named = process.argv.slice(2);
for (const name of named) {
  if (!(name in PACKAGES)) {
    console.error(`Unknown package ${name}; one of: ${Object.keys(PACKAGES).join(', ')}`);
    process.exit(2);
  }
}

for (const name of named.length > 0 ? named : Object.keys(PACKAGES)) {
  const directory = path.join(__dirname, '..', name);
  // Written after a successful install: the lockfile it installed.
  const stamp = path.join(directory, 'node_modules', '.installed-lockfile-sha256');
  const lockfile = createHash('sha256')
    .update(fs.readFileSync(path.join(directory, 'package-lock.json')))
    .digest('hex');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === lockfile) continue;
  console.log(`Installing ${PACKAGES[name]} (${name}): npm ci`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: directory, stdio: 'inherit' });
  fs.writeFileSync(stamp, lockfile);
}
