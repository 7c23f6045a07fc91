import { PDF_HEADER_LINE, buildSamplePdf, buildTextlessPdf, samplePdfBody } from '../test/document-fixtures';
import { extractPdf, type PdfEngine } from './pdf.extractor';
import { isPdftotextAvailable } from './pdftotext.runner';

// Both engines are checked where pdftotext is installed; unpdf alone elsewhere (CI may lack poppler).
const engines: PdfEngine[] = isPdftotextAvailable() ? ['pdftotext', 'unpdf'] : ['unpdf'];

describe.each(engines)('extractPdf with %s', (engine) => {
  let samplePdf: Buffer;
  beforeAll(async () => {
    samplePdf = await buildSamplePdf(4);
  });

  it('returns the body text of every page without running headers and footers', async () => {
    const { text, pages } = await extractPdf(samplePdf, { engine });
    expect(pages).toHaveLength(4);
    for (let pageNumber = 1; pageNumber <= 4; pageNumber += 1) {
      for (const line of samplePdfBody(pageNumber)) {
        expect(text).toContain(line);
        expect(pages[pageNumber - 1]).toContain(line);
      }
    }
    expect(text).not.toContain(PDF_HEADER_LINE);
    expect(text).not.toMatch(/Page \d of 4/);
  });

  it('reports a PDF without text as probably scanned', async () => {
    await expect(extractPdf(await buildTextlessPdf(), { engine })).rejects.toMatchObject({
      code: 'no_text',
      message: 'PDF has no extractable text (scanned PDF?)',
    });
  });

  it('reports a truncated PDF as corrupt without hanging', async () => {
    const truncated = samplePdf.subarray(0, Math.floor(samplePdf.length / 3));
    await expect(extractPdf(truncated, { engine, timeoutMs: 10_000 })).rejects.toMatchObject({
      code: expect.stringMatching(/^(corrupt|no_text)$/),
    });
  });

  it('reports garbage behind a PDF header as corrupt', async () => {
    const garbage = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x5a)]);
    await expect(extractPdf(garbage, { engine, timeoutMs: 10_000 })).rejects.toMatchObject({
      code: expect.stringMatching(/^(corrupt|no_text)$/),
    });
  });
});

describe('extractPdf time limit', () => {
  it.each(engines)('gives up with a timeout error when %s runs out of time', async (engine) => {
    await expect(extractPdf(await buildSamplePdf(4), { engine, timeoutMs: 1 })).rejects.toMatchObject({
      code: 'timeout',
      message: 'Processing took longer than 1 second',
    });
  });
});

describe('extractPdf engine choice', () => {
  it('gives the same text whichever engine runs by default', async () => {
    const samplePdf = await buildSamplePdf(3);
    const automatic = await extractPdf(samplePdf);
    const unpdf = await extractPdf(samplePdf, { engine: 'unpdf' });
    expect(automatic.pages).toHaveLength(3);
    expect(automatic.text.replace(/\s+/g, ' ')).toBe(unpdf.text.replace(/\s+/g, ' '));
  });
});
