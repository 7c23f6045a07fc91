import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * Every path of this repository the documentation names, in backticks or as a link, exists: a file moved or removed
 * takes its mentions with it. Read from the working tree as git sees it (tracked, or new and not ignored).
 */
const ROOT = join(__dirname, '..');
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
const entries = new Set(files);
for (const file of files) {
  for (let at = file.lastIndexOf('/'); at > 0; at = file.lastIndexOf('/', at - 1)) entries.add(file.slice(0, at));
}
const topLevel = new Set([...entries].map((entry) => entry.split('/')[0]));

/** The documents: the README, docs/, and each lib's README. */
const documents = files.filter((file) => /^(README\.md|docs\/.+\.md|libs\/[^/]+\/README\.md)$/.test(file));

/** What the recipes make up to show the steps (a `notes` feature), and paths a run writes, git ignoring them. */
const EXAMPLES = /(^|\/)notes?([./-]|$)|^(dist|\.local|bench\/\.cache)(\/|$)/;
/** A file named alone, by the endings the house writes; other names (`ipaddr.js`, `res.json`) are not its files. */
const OWN_FILE = /^[\w.-]+\.(ts|md|mjs|sql|ya?ml|sh)$/;

function exists(path: string, document: string): boolean {
  const here = dirname(document);
  const candidates = [path, join(here, path), join(here, 'src', path)].map((candidate) => normalize(candidate));
  if (candidates.some((candidate) => entries.has(candidate))) return true;
  // A name the document's section places (a feature's folder, a file of the lib it describes) stands anywhere.
  return !path.includes('/') && [...entries].some((entry) => entry.endsWith(`/${path}`));
}

/** The repository paths a document names, each as written. */
function namedPaths(document: string): string[] {
  const text = readFileSync(join(ROOT, document), 'utf8');
  const here = dirname(document);
  const named: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(https?:|mailto:|#)/.test(target)) continue;
    const path = normalize(join(here, target.split('#')[0]));
    if (!path.startsWith('..')) named.push(path);
  }
  for (const [, code] of text.matchAll(/`([^`\n]+)`/g)) {
    const path = code.trim().replace(/\/$/, '');
    if (!/^[\w.-]+(\/[\w.-]+)*$/.test(path) || path.startsWith('.') || EXAMPLES.test(path)) continue;
    const [first] = path.split('/');
    const ours = path.includes('/')
      ? topLevel.has(first) || first === 'src' || entries.has(join(here, first))
      : OWN_FILE.test(path) || code.trim().endsWith('/');
    if (ours) named.push(path);
  }
  return named;
}

describe('The documentation’s paths', () => {
  it.each(documents)('%s names only paths that exist', (document) => {
    const missing = namedPaths(document).filter((path) => !exists(path, document));
    expect(missing).toEqual([]);
  });
});
