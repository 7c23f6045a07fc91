import { buildPasswordProtectedPdf, buildSamplePdf, samplePdfBody } from '../test/document-fixtures';
import { extractPagesWithPdfium } from './pdfium.extractor';

const TIMEOUT_MS = 30_000;

describe('extractPagesWithPdfium', () => {
  it('returns the text of every page in page order', async () => {
    const pages = await extractPagesWithPdfium(await buildSamplePdf(6), TIMEOUT_MS);
    expect(pages).toHaveLength(6);
    pages.forEach((text, index) => {
      for (const line of samplePdfBody(index + 1)) expect(text).toContain(line);
      expect(text).toContain(`Page ${index + 1} of 6`);
    });
  });

  // The document is reopened every 256 pages; no page may be lost, repeated or reordered at the seams.
  it('keeps page order across reopenings of a long document', async () => {
    const pages = await extractPagesWithPdfium(await buildSamplePdf(600), TIMEOUT_MS);
    expect(pages).toHaveLength(600);
    pages.forEach((text, index) => expect(text).toContain(`Page ${index + 1} of 600`));
  });

  it('reports bytes that are no PDF as corrupt', async () => {
    const garbage = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x5a)]);
    await expect(extractPagesWithPdfium(garbage, TIMEOUT_MS)).rejects.toMatchObject({
      code: 'corrupt',
      message: 'The file is not a valid PDF',
    });
  });

  it('reports a password-protected PDF as unsupported', async () => {
    await expect(extractPagesWithPdfium(await buildPasswordProtectedPdf(), TIMEOUT_MS)).rejects.toMatchObject({
      code: 'unsupported',
      message: 'Password-protected PDFs are not supported',
    });
  });

  it('reads further documents after a failed one', async () => {
    await expect(extractPagesWithPdfium(Buffer.from('%PDF-1.4\nnot really'), TIMEOUT_MS)).rejects.toMatchObject({
      code: 'corrupt',
    });
    const pages = await extractPagesWithPdfium(await buildSamplePdf(2), TIMEOUT_MS);
    expect(pages[1]).toContain(samplePdfBody(2)[0]);
  });
});

describe('extractPagesWithPdfium after a trap inside PDFium', () => {
  it('reports the file as corrupt and loads a new PDFium for the next document', async () => {
    const trap = Object.assign(new Error('memory access out of bounds'), { name: 'RuntimeError' });
    const loadModule = jest.fn(async () => ({
      _FPDF_InitLibrary: () => undefined,
      _FPDF_LoadMemDocument: () => {
        throw trap;
      },
      wasmExports: { malloc: () => 8, free: () => undefined },
      HEAPU8: new Uint8Array(4096),
    }));
    await jest.isolateModulesAsync(async () => {
      jest.doMock('@hyzyla/pdfium', () => ({ PDFiumModule: loadModule }));
      const { extractPagesWithPdfium: extractIsolated } = await import('./pdfium.extractor');
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        await expect(extractIsolated(Buffer.from('%PDF-1.7\n'), TIMEOUT_MS)).rejects.toMatchObject({
          code: 'corrupt',
          message: 'The file is not a valid PDF',
        });
        expect(loadModule).toHaveBeenCalledTimes(attempt);
      }
    });
  });
});
