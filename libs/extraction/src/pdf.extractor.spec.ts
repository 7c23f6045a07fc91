import {
  PDF_HEADER_LINE,
  buildPasswordProtectedPdf,
  buildSamplePdf,
  buildTextlessPdf,
  samplePdfBody,
} from '../test/document-fixtures';
import { extractPdf, type PdfEngine } from './pdf.extractor';
import { isPdftotextAvailable } from './pdftotext.runner';
import { normaliseWhitespace } from './whitespace.normaliser';

// Both engines are checked where pdftotext is installed; PDFium alone elsewhere (CI may lack poppler).
const engines: PdfEngine[] = isPdftotextAvailable() ? ['pdftotext', 'pdfium'] : ['pdfium'];

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
    // Normalised page by page, the whole text is as normalising it whole would leave it.
    expect(normaliseWhitespace(text)).toBe(text);
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
  // Long enough that no engine reads it within the millisecond, even where PDFium is loaded and warm.
  it.each(engines)('gives up with a timeout error when %s runs out of time', async (engine) => {
    await expect(extractPdf(await buildSamplePdf(200), { engine, timeoutMs: 1 })).rejects.toMatchObject({
      code: 'timeout',
      message: 'Processing took longer than 1 second',
    });
  });
});

describe('extractPdf engine choice', () => {
  it('gives the same text whichever engine runs by default', async () => {
    const samplePdf = await buildSamplePdf(3);
    const automatic = await extractPdf(samplePdf);
    const pdfium = await extractPdf(samplePdf, { engine: 'pdfium' });
    expect(automatic.pages).toHaveLength(3);
    expect(automatic.text.replace(/\s+/g, ' ')).toBe(pdfium.text.replace(/\s+/g, ' '));
  });

  it('reads PDFs with PDFium where pdftotext is not on PATH', async () => {
    const samplePdf = await buildSamplePdf(3);
    const path = process.env.PATH;
    // A fresh module registry, so pdftotext is looked up again, on a PATH where it cannot be found.
    process.env.PATH = '';
    try {
      await jest.isolateModulesAsync(async () => {
        const runner = await import('./pdftotext.runner');
        const pdfium = await import('./pdfium.extractor');
        const readWithPdfium = jest.spyOn(pdfium, 'extractPagesWithPdfium');
        const { extractPdf: extractIsolated } = await import('./pdf.extractor');
        const { pages } = await extractIsolated(samplePdf);
        expect(runner.isPdftotextAvailable()).toBe(false);
        expect(readWithPdfium).toHaveBeenCalledTimes(1);
        expect(pages[2]).toContain(samplePdfBody(3)[0]);
      });
    } finally {
      process.env.PATH = path;
    }
  });

  // pdftotext refuses the file; the automatic choice then asks PDFium, which tells why.
  it('reports a password-protected PDF as unsupported', async () => {
    await expect(extractPdf(await buildPasswordProtectedPdf())).rejects.toMatchObject({
      code: 'unsupported',
      message: 'Password-protected PDFs are not supported',
    });
  });
});
