import {
  DOCX_HEADING,
  PDF_HEADER_LINE,
  PNG_BYTES,
  buildPdfOfLines,
  buildSampleDocx,
  buildSamplePdf,
  samplePdfBody,
} from '../test/document-fixtures';
import { extractDocument, extractPassages } from './document.extractor';
import { splitIntoPassages } from './passage.splitter';
import { extractPdf } from './pdf.extractor';
import type { DeclaredFileType } from './extraction.types';

describe('extractDocument', () => {
  it('extracts a PDF into passages of its normalised text', async () => {
    const bytes = await buildSamplePdf(4);
    const { contentLength, passages } = await extractDocument('pdf', bytes);
    // Four short pages fit one passage: the whole text, as extractPdf reads it.
    const { text } = await extractPdf(bytes);
    expect(passages).toEqual([text]);
    expect(contentLength).toBe(text.length);
    expect(text).toContain(samplePdfBody(2)[0]);
    expect(text).not.toContain(PDF_HEADER_LINE);
  });

  it('cuts a long PDF into the passages of its whole text, page after page', async () => {
    const bytes = await buildSamplePdf(60);
    const { text } = await extractPdf(bytes);
    const streamed: string[][] = [];
    const { contentLength } = await extractPassages('pdf', bytes, { onPassages: (batch) => streamed.push(batch) });
    expect(streamed.length).toBeGreaterThan(1);
    expect(streamed.flat()).toEqual(splitIntoPassages(text));
    expect(contentLength).toBe(text.length);
  });

  it('keeps a sentence that runs over a page break in one passage, and its page break out of it', async () => {
    const filler = Array.from({ length: 40 }, (_, line) => `Line ${line + 1} of the rules of the house is here.`);
    const bytes = await buildPdfOfLines([
      [...filler, 'Book a check-out inspection with the estate office at least one week before'],
      ['you leave. We do not keep post for former residents.', ...filler],
    ]);
    const { passages } = await extractDocument('pdf', bytes);
    expect(passages.length).toBeGreaterThan(2);
    expect(passages.some((passage) => passage.includes('one week before\nyou leave.'))).toBe(true);
    expect(passages.join('\n')).not.toContain('before\n\nyou');
    for (const passage of passages) expect(passage).toMatch(/\.$/);
  });

  it('extracts a DOCX', async () => {
    const { contentLength, passages } = await extractDocument('docx', await buildSampleDocx());
    expect(passages[0].startsWith(DOCX_HEADING)).toBe(true);
    expect(contentLength).toBeGreaterThanOrEqual(passages[0].length);
  });

  it('extracts and normalises a text file', async () => {
    const bytes = Buffer.from('Caf\xe9:\r\n\r\n\r\n\r\ncr\xe8me\u00a0 br\xfbl\xe9e  ', 'latin1');
    await expect(extractDocument('txt', bytes)).resolves.toEqual({
      contentLength: 'Café:\n\ncrème brûlée'.length,
      passages: ['Café:\n\ncrème brûlée'],
    });
  });

  it('splits a long text file into several passages', async () => {
    const paragraph = 'Refunds are processed within five working days of the request. '.repeat(8).trim();
    const text = Array.from({ length: 20 }, () => paragraph).join('\n\n');
    const { passages } = await extractDocument('txt', Buffer.from(text));
    expect(passages.length).toBeGreaterThan(5);
  });

  it.each<[DeclaredFileType, Buffer, string]>([
    ['txt', PNG_BYTES, 'type_mismatch'],
    ['pdf', Buffer.from([0x13, 0x00, 0x37, 0xfe, 0x81, 0x00, 0x42]), 'type_mismatch'],
    ['docx', Buffer.from('%PDF-1.4\n'), 'type_mismatch'],
    ['txt', Buffer.alloc(0), 'no_text'],
    ['pdf', Buffer.alloc(0), 'no_text'],
    ['txt', Buffer.from('\n\u00a0\t \n'), 'no_text'],
  ])('refuses %s content it cannot use (%#)', async (type, bytes, code) => {
    await expect(extractDocument(type, bytes)).rejects.toMatchObject({ name: 'ExtractionError', code });
  });

  it('refuses an undeclared file type', async () => {
    await expect(extractDocument('rtf' as DeclaredFileType, Buffer.from('{\\rtf1}'))).rejects.toMatchObject({
      code: 'unsupported',
    });
  });
});
