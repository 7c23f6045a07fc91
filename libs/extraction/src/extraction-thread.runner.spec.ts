import { waitFor } from '../../../test/support/wait-for';
import { PNG_BYTES, buildSamplePdf, samplePdfBody } from '../test/document-fixtures';
import { extractDocument } from './document.extractor';
import { ExtractionError } from './extraction.error';
import {
  OWN_THREAD_MIN_BYTES,
  closeExtractionThreads,
  extractionThreadCount,
  runExtractionInThread,
} from './extraction-thread.runner';

// Each new thread compiles the TypeScript sources with ts-node, which takes a moment on a cold start.
jest.setTimeout(20_000);

describe('runExtractionInThread', () => {
  afterAll(() => closeExtractionThreads());

  it('returns the same result as extracting in-process', async () => {
    const bytes = Buffer.from('First paragraph.\r\n\r\nSecond paragraph with caf\xe9.', 'latin1');
    const inThread = await runExtractionInThread('txt', bytes, { timeoutMs: 15_000, maxMemoryMb: 64 });
    expect(inThread).toEqual(await extractDocument('txt', bytes));
    expect(bytes.toString('latin1')).toContain('caf\xe9');
  });

  it('takes over a handed-over file instead of copying it, and copies a slice of the shared pool', async () => {
    const text = 'Handed over.\n\nNot copied.';
    const own = Buffer.allocUnsafeSlow(text.length);
    own.write(text);
    const pooled = Buffer.from(text);
    expect(pooled.byteLength).toBeLessThan(pooled.buffer.byteLength);
    const expected = await extractDocument('txt', Buffer.from(text));

    await expect(runExtractionInThread('txt', own, { timeoutMs: 15_000, handOver: true })).resolves.toEqual(expected);
    expect(own.byteLength).toBe(0);
    await expect(runExtractionInThread('txt', pooled, { timeoutMs: 15_000, handOver: true })).resolves.toEqual(
      expected,
    );
    expect(pooled.toString()).toBe(text);
  });

  it('extracts a PDF', async () => {
    const { passages } = await runExtractionInThread('pdf', await buildSamplePdf(3), { timeoutMs: 15_000 });
    expect(passages.join('\n')).toContain(samplePdfBody(3)[1]);
  });

  it('brings every passage of a long document over, in order', async () => {
    const paragraphs = Array.from({ length: 12_000 }, (_, index) => `Paragraph ${index} of the handbook, on its own.`);
    const bytes = Buffer.from(paragraphs.join('\n\n'));
    const inThread = await runExtractionInThread('txt', bytes, { timeoutMs: 15_000 });
    expect(inThread.passages.length).toBeGreaterThan(2 * 256); // several messages
    expect(inThread).toEqual(await extractDocument('txt', bytes));
  });

  it('ends the thread of a large file as soon as it is done, and keeps one warm for small files', async () => {
    await closeExtractionThreads();
    const small = Buffer.from('A small file.');
    await runExtractionInThread('txt', small, { timeoutMs: 15_000 });
    expect(extractionThreadCount()).toBe(1);

    const sentence = 'The large file has many sentences like this one. ';
    const large = Buffer.from(sentence.repeat(Math.ceil(OWN_THREAD_MIN_BYTES / sentence.length)));
    const extracted = runExtractionInThread('txt', large, { timeoutMs: 15_000 });
    expect(extractionThreadCount()).toBe(2); // its own thread beside the warm one
    expect((await extracted).contentLength).toBeGreaterThan(OWN_THREAD_MIN_BYTES - sentence.length);
    await waitFor(async () => (extractionThreadCount() === 1 ? true : undefined), 5_000, 20);

    await runExtractionInThread('txt', small, { timeoutMs: 15_000 });
    expect(extractionThreadCount()).toBe(1);
  });

  it('re-throws an ExtractionError from the thread with its code and message', async () => {
    const failure = runExtractionInThread('txt', PNG_BYTES, { timeoutMs: 15_000 });
    await expect(failure).rejects.toBeInstanceOf(ExtractionError);
    await expect(failure).rejects.toMatchObject({
      code: 'type_mismatch',
      message: 'The file content does not match the declared type "txt"',
    });
  });

  it('gives up with a timeout error when the thread runs too long', async () => {
    const large = Buffer.from('Lorem ipsum dolor sit amet. '.repeat(200_000));
    await expect(runExtractionInThread('txt', large, { timeoutMs: 1 })).rejects.toMatchObject({
      code: 'timeout',
      message: 'Processing took longer than 1 second',
    });
  });

  it('reports a document that exhausts the memory cap as too large', async () => {
    // 28 MB of text needs several copies while being normalised and split; 64 MB of heap is enough for a small file.
    const large = Buffer.from('Lorem ipsum dolor sit amet. '.repeat(1_000_000));
    await expect(runExtractionInThread('txt', large, { timeoutMs: 15_000, maxMemoryMb: 64 })).rejects.toMatchObject({
      code: 'too_large',
      message: 'The document is too large to process',
    });
  });

  it('stops when its signal is aborted', async () => {
    const large = Buffer.from('Lorem ipsum dolor sit amet. '.repeat(200_000));
    const controller = new AbortController();
    const extraction = runExtractionInThread('txt', large, { timeoutMs: 15_000, signal: controller.signal });
    controller.abort();
    await expect(extraction).rejects.toThrow('Extraction aborted');
  });

  it('extracts again after a thread was stopped for time or memory', async () => {
    const large = Buffer.from('Lorem ipsum dolor sit amet. '.repeat(1_000_000));
    await expect(runExtractionInThread('txt', large, { timeoutMs: 1 })).rejects.toMatchObject({ code: 'timeout' });
    await expect(runExtractionInThread('txt', large, { timeoutMs: 15_000, maxMemoryMb: 64 })).rejects.toMatchObject({
      code: 'too_large',
    });
    const bytes = Buffer.from('Still here.');
    await expect(runExtractionInThread('txt', bytes, { timeoutMs: 15_000, maxMemoryMb: 64 })).resolves.toEqual(
      await extractDocument('txt', bytes),
    );
    await expect(runExtractionInThread('txt', bytes, { timeoutMs: 15_000 })).resolves.toEqual(
      await extractDocument('txt', bytes),
    );
  });
});
