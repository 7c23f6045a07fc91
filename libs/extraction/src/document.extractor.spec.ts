import {
  DOCX_HEADING,
  PDF_HEADER_LINE,
  PNG_BYTES,
  buildSampleDocx,
  buildSamplePdf,
  samplePdfBody,
} from '../test/document-fixtures';
import { extractDocument } from './document.extractor';
import type { DeclaredFileType } from './extraction.types';

describe('extractDocument', () => {
  it('extracts a PDF into normalised text and passages', async () => {
    const { text, passages } = await extractDocument('pdf', await buildSamplePdf(4));
    expect(text).toContain(samplePdfBody(2)[0]);
    expect(text).not.toContain(PDF_HEADER_LINE);
    expect(passages).toEqual([text]);
  });

  it('extracts a DOCX', async () => {
    const { text, passages } = await extractDocument('docx', await buildSampleDocx());
    expect(text.startsWith(DOCX_HEADING)).toBe(true);
    expect(passages.length).toBeGreaterThan(0);
  });

  it('extracts and normalises a text file', async () => {
    const bytes = Buffer.from('caf\xe9\r\n\r\n\r\n\r\ncr\xe8me\u00a0 br\xfbl\xe9e  ', 'latin1');
    await expect(extractDocument('txt', bytes)).resolves.toEqual({
      text: 'café\n\ncrème brûlée',
      passages: ['café\n\ncrème brûlée'],
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
