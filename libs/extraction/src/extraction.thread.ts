// Task handler of the extraction threads (a piscina pool: each thread runs many documents, one at a time).
// Relative imports only: the thread may run from TypeScript sources without the path mapping that resolves
// "@app/..." aliases.
import { extractPassages } from './document.extractor';
import { ExtractionError } from './extraction.error';
import type { ExtractionThreadInput, ExtractionThreadOutcome } from './extraction-thread.protocol';

/**
 * Passages per message: large enough that posting costs little, small enough that no message (and no copy of one)
 * holds much of a large document; about 250 KB of text.
 */
const PASSAGES_PER_MESSAGE = 256;

export default async function extractInThread(input: ExtractionThreadInput): Promise<ExtractionThreadOutcome> {
  let batch: string[] = [];
  let passageCount = 0;
  const post = () => {
    input.passages.postMessage(batch);
    passageCount += batch.length;
    batch = [];
  };
  try {
    const { contentLength } = await extractPassages(input.type, Buffer.from(input.bytes), {
      timeoutMs: input.timeoutMs,
      onPassages: (passages) => {
        for (const passage of passages) batch.push(passage);
        if (batch.length >= PASSAGES_PER_MESSAGE) post();
      },
    });
    if (batch.length > 0) post();
    return { status: 'extracted', contentLength, passageCount };
  } catch (error) {
    if (error instanceof ExtractionError) return { status: 'rejected', code: error.code, message: error.message };
    return { status: 'crashed', message: error instanceof Error ? error.message : String(error) };
  }
}
