// Task handler of the extraction threads (a piscina pool: each thread runs many documents, one at a time).
// Relative imports only: the thread may run from TypeScript sources without the path mapping that resolves
// "@app/..." aliases.
import { extractDocument } from './document.extractor';
import { ExtractionError } from './extraction.error';
import type { ExtractionThreadInput, ExtractionThreadOutcome } from './extraction-thread.protocol';

export default async function extractInThread(input: ExtractionThreadInput): Promise<ExtractionThreadOutcome> {
  try {
    const document = await extractDocument(input.type, Buffer.from(input.bytes), { timeoutMs: input.timeoutMs });
    return { status: 'extracted', document };
  } catch (error) {
    if (error instanceof ExtractionError) return { status: 'rejected', code: error.code, message: error.message };
    return { status: 'crashed', message: error instanceof Error ? error.message : String(error) };
  }
}
