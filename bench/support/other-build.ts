/**
 * A second build to run beside this checkout's, for a before-and-after figure from one command on one machine:
 *   --before <commit> (or BENCH_BEFORE=<commit>): that commit's files are exported (`git archive`) into a directory
 *     under the system's temporary one, its node_modules hard-linked from this checkout's when its package-lock.json
 *     is the same (else `npm ci` there), built with `npm run build`, and the directory removed at the end;
 *   BENCH_OTHER_API=<…/dist/apps/api/src/main.js> (and BENCH_OTHER_WORKER, by default the worker beside it): a build
 *     made elsewhere, used as it is.
 * BENCH_KEEP_BUILD=1 keeps a commit's build in <tmp>/va-bench-builds/<commit> and uses it again next time.
 * Each build migrates its own databases with its own migrations, so a commit of an older schema runs as it shipped.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { runMigrations } from '../../libs/database/src/data-source-options';
import { API_ENTRY, ROOT, WORKER_ENTRY } from './processes';
import { beforeCommit, onInterrupt } from './report';

export { otherBuildAsked } from './report';

export interface Build {
  /** How the reports name it: `now`, the commit of the other build, or `other` for one given by path. */
  label: string;
  /** Its project directory, the built processes' working directory. */
  root: string;
  apiEntry: string;
  workerEntry: string;
  /** Applies this build's migrations to a fresh database. */
  migrate(databaseUrl: string): Promise<unknown>;
}

/** This checkout, as `npm run build` left it. */
export const CURRENT_BUILD: Build = {
  label: 'now',
  root: ROOT,
  apiEntry: API_ENTRY,
  workerEntry: WORKER_ENTRY,
  migrate: runMigrations,
};

export interface OtherBuild extends Build {
  /** Removes what was made for it (nothing for a build given by path). */
  close(): Promise<void>;
}

/** The second build asked for, ready to start; undefined when none was. */
export async function otherBuild(): Promise<OtherBuild | undefined> {
  const commit = beforeCommit();
  if (commit) return buildCommit(commit);
  const api = process.env.BENCH_OTHER_API;
  if (!api) return undefined;
  const apiEntry = resolve(api);
  // …/dist/apps/api/src/main.js: the project is the directory above dist.
  const distAt = apiEntry.lastIndexOf(`${sep}dist${sep}`);
  if (distAt < 0) throw new Error(`BENCH_OTHER_API must be a built API under a dist directory: ${apiEntry}`);
  const root = apiEntry.slice(0, distAt);
  const workerEntry = resolve(process.env.BENCH_OTHER_WORKER ?? join(root, 'dist', 'apps', 'worker', 'src', 'main.js'));
  for (const entry of [apiEntry, workerEntry]) if (!existsSync(entry)) throw new Error(`${entry} does not exist`);
  // The path is named under each table; a column takes a short name.
  return { label: 'other', root, apiEntry, workerEntry, migrate: migratorOf(root), close: async () => undefined };
}

/** The migrations of the build in `root`, run by its own code in a process of its own. */
function migratorOf(root: string): (databaseUrl: string) => Promise<void> {
  const module = join(root, 'dist', 'libs', 'database', 'src', 'data-source-options.js');
  return async (databaseUrl) => {
    const child = spawn(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(module)}).runMigrations(process.env.DATABASE_URL)` +
          '.then(() => process.exit(0), (error) => { console.error(error); process.exit(1); })',
      ],
      { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`the migrations of ${root} failed (exit ${code})`);
  };
}

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} in ${cwd} failed (exit ${result.status})`);
}

/** The built API and worker of the project in `root`. */
function entriesOf(root: string): [api: string, worker: string] {
  return [join(root, 'dist', 'apps', 'api', 'src', 'main.js'), join(root, 'dist', 'apps', 'worker', 'src', 'main.js')];
}

/**
 * `commit` exported and built in a directory of its own. The export is a plain copy of the commit's files, not a git
 * worktree: a run stopped half-way leaves nothing registered in the repository.
 */
async function buildCommit(commit: string): Promise<OtherBuild> {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${commit}^{commit}`], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .slice(0, 12);
  const label = /^[0-9a-f]{7,40}$/i.test(commit) ? commit : `${commit} (${sha.slice(0, 7)})`;
  // With BENCH_KEEP_BUILD, the build stays for the next comparison with it: outside the project, whose type check
  // and linters would read its sources.
  const kept = process.env.BENCH_KEEP_BUILD ? join(tmpdir(), 'va-bench-builds', sha) : undefined;
  const keptEntries = kept && entriesOf(kept);
  if (kept && keptEntries && keptEntries.every((entry) => existsSync(entry))) {
    console.error(`Using the build of ${commit} (${sha}) kept in ${kept}`);
    const [apiEntry, workerEntry] = keptEntries;
    return { label, root: kept, apiEntry, workerEntry, migrate: migratorOf(kept), close: async () => undefined };
  }
  if (kept) rmSync(kept, { recursive: true, force: true });
  if (kept) mkdirSync(kept, { recursive: true });
  const root = kept ?? mkdtempSync(join(tmpdir(), `va-bench-${sha}-`));
  const close = async () => {
    forget();
    if (!kept) rmSync(root, { recursive: true, force: true });
  };
  const forget = onInterrupt(close);
  try {
    console.error(`Building ${commit} (${sha}) in ${root}`);
    const archive = spawn('git', ['archive', '--format=tar', sha], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const tar = spawn('tar', ['-x', '-C', root], { stdio: ['pipe', 'ignore', 'inherit'] });
    archive.stdout.pipe(tar.stdin);
    const [[archived], [extracted]] = (await Promise.all([once(archive, 'exit'), once(tar, 'exit')])) as [
      [number],
      [number],
    ];
    if (archived !== 0 || extracted !== 0) throw new Error(`exporting ${commit} failed`);
    const sameLock =
      readFileSync(join(root, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8');
    // Hard links: the same packages at no copy cost; a build never writes into node_modules.
    if (sameLock) run('cp', ['-al', join(ROOT, 'node_modules'), join(root, 'node_modules')], root);
    else run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], root);
    run('npm', ['run', 'build'], root);
    const [apiEntry, workerEntry] = entriesOf(root);
    for (const entry of [apiEntry, workerEntry]) {
      if (!existsSync(entry)) throw new Error(`${commit}'s build has no ${entry.slice(root.length + 1)}`);
    }
    console.error(`Built ${commit} (${sameLock ? 'node_modules linked' : 'npm ci'})`);
    return { label, root, apiEntry, workerEntry, migrate: migratorOf(root), close };
  } catch (error) {
    await close();
    throw error;
  }
}
