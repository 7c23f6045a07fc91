import Module from 'node:module';
import * as bundledUnpdf from 'unpdf';

type Unpdf = typeof bundledUnpdf;
type NodeModuleLoader = (request: string, parent: unknown, isMain: boolean) => unknown;

/**
 * unpdf loads its PDF.js bundle with a dynamic `import()`. Jest evaluates modules in a VM context where
 * that fails unless Node runs with --experimental-vm-modules, so under Jest unpdf is loaded through Node's
 * own loader, outside that context. Everywhere else the regular import is used.
 */
export function loadUnpdf(): Unpdf {
  if (process.env.JEST_WORKER_ID === undefined) return bundledUnpdf;
  const nodeLoader = (Module as unknown as { _load: NodeModuleLoader })._load;
  return nodeLoader(require.resolve('unpdf'), null, false) as Unpdf;
}
