import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The README's first session, as a reader copies it: the first bash block after its introduction. */
export async function readmeFirstSession(): Promise<string> {
  const readme = await readFile(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('A first session')));
  if (!block) throw new Error('README has no first session');
  return block[1];
}
