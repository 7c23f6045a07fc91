import { redirectExtractionToCompiled } from './compiled-extraction';

/**
 * Imported first by benchmarks that boot the worker from TypeScript sources: unless BENCH_EXTRACTION=ts-node,
 * the worker's extraction threads then start from compiled JavaScript, as in a deployed worker, instead of
 * loading the TypeScript compiler into every thread through ts-node.
 */
export const extractionThreadFrom = process.env.BENCH_EXTRACTION === 'ts-node' ? 'ts-node sources' : 'compiled JS';
if (extractionThreadFrom === 'compiled JS') redirectExtractionToCompiled();
