#!/usr/bin/env node
// Installs the repository's packages of their own, each with its own lockfile, when its node_modules is missing or
// older than its lockfile: the reference LiveKit agent (examples/livekit-agent), the web-call page (examples/web-call)
// and the TypeScript SDK (sdk/typescript). `npm run typecheck` and `npm run test:e2e` run it first, so a fresh clone needs nothing more than
// `npm ci`, while the service's own install (and its image) stays without the agent's 280 MB of LiveKit, OpenAI and
// Deepgram packages, the page's bundler and browser driver, and the SDK's generator.
//
// The web-call page's test drives Debian's Chromium: with the page's packages, Chromium is installed too where it is
// missing and apt-get can (root, Debian); where it cannot, the page's test says so in one line and skips.
//
//   node scripts/install-packages.js [directory...]   (all of them when none is named)
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const PACKAGES = {
  'examples/livekit-agent': 'the LiveKit agent example',
  'examples/web-call': 'the web-call page example',
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

/** Debian's Chromium for the web-call page's test, where this machine can install it; a line saying why not otherwise. */
function ensureChromium() {
  const found = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].some(
    (candidate) => candidate && fs.existsSync(candidate),
  );
  if (found) return;
  if (process.platform !== 'linux' || process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/apt-get')) {
    console.log("No Chromium, and apt-get cannot install it here: the web-call page's test will be skipped");
    return;
  }
  console.log("Installing Debian's chromium for the web-call page's test: apt-get install chromium");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  } catch {
    try {
      // A package list never fetched, or too old to name the current version.
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
    } catch {
      console.log("Chromium could not be installed: the web-call page's test will be skipped");
    }
  }
}

if (named.length === 0 || named.includes('examples/web-call')) ensureChromium();
