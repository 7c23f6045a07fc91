#!/usr/bin/env node
// Installs the reference LiveKit agent (examples/livekit-agent, a package of its own with its own lockfile) when its
// node_modules is missing or older than its lockfile. `npm run typecheck` and `npm run test:e2e` run it first, so a
// fresh clone needs nothing more than `npm ci`, while the service's own install (and its image) stays without the
// agent's 280 MB of LiveKit, OpenAI and Deepgram packages.
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const directory = path.join(__dirname, '..', 'examples', 'livekit-agent');
// Written after a successful install: the lockfile it installed.
const stamp = path.join(directory, 'node_modules', '.installed-lockfile-sha256');
const lockfile = createHash('sha256')
  .update(fs.readFileSync(path.join(directory, 'package-lock.json')))
  .digest('hex');

if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== lockfile) {
  console.log('Installing the LiveKit agent example (examples/livekit-agent): npm ci');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: directory, stdio: 'inherit' });
  fs.writeFileSync(stamp, lockfile);
}
