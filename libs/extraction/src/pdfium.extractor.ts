import type { PDFiumModule } from '@hyzyla/pdfium';
import { ExtractionError, processingTimeoutError } from './extraction.error';

/**
 * The raw PDFium build. The package's page objects cannot be closed one by one (a 4,000-page document would keep
 * every page loaded until the end), so the C API is called directly. Its typings omit FPDF_InitLibrary.
 */
type Pdfium = Awaited<ReturnType<typeof PDFiumModule>> & { _FPDF_InitLibrary: () => void };

// FPDF_GetLastError codes (fpdfview.h).
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
const UTF16_BYTES = 2;
/**
 * PDFium keeps every object it has parsed until its document is closed (about 17 KiB a page of dense text, 94 MiB
 * of WebAssembly memory for a 20 MiB PDF, which never shrinks). Reopening the document every so many pages
 * bounds that, at the cost of reading its cross-reference table again (a few milliseconds).
 */
const PAGES_PER_OPENING = 256;
const utf16 = new TextDecoder('utf-16le');

/**
 * One PDFium instance per thread, loaded when the first PDF needs it (where pdftotext reads every PDF, never) and
 * reused for every later document.
 */
let pdfium: Promise<Pdfium> | undefined;

/**
 * Extracts the text of each page with PDFium (WebAssembly, in the calling thread). Every page is closed before the
 * next is loaded, and the document is reopened every PAGES_PER_OPENING pages, so memory holds the file and a
 * bounded number of parsed objects rather than the whole parsed document. The time limit is checked between pages;
 * one page cannot be interrupted, which is what terminating the extraction thread is for.
 */
export async function extractPagesWithPdfium(bytes: Buffer, timeoutMs: number): Promise<string[]> {
  // Awaited before the deadline starts and outside the error mapping: failing to load PDFium is our problem,
  // not a sign of a corrupt file.
  const module = await loadPdfium();
  const deadline = performance.now() + timeoutMs;
  try {
    return readPages(module, bytes, deadline, timeoutMs);
  } catch (error) {
    // WebAssembly.RuntimeError, by name: this project's type libraries do not declare WebAssembly.
    if (!(error instanceof Error && error.name === 'RuntimeError')) throw error;
    // A trap inside PDFium (a file it cannot cope with) leaves this instance unusable: the next document gets a
    // new one.
    pdfium = undefined;
    throw new ExtractionError('corrupt', 'The file is not a valid PDF');
  }
}

/** Synchronous throughout: no other document can use this PDFium instance meanwhile. */
function readPages(module: Pdfium, bytes: Buffer, deadline: number, timeoutMs: number): string[] {
  const file = allocate(module, bytes.length);
  try {
    module.HEAPU8.set(bytes, file);
    const pages: string[] = [];
    let pageCount = 0;
    do {
      const document = module._FPDF_LoadMemDocument(file, bytes.length, 0);
      if (!document) throw loadError(module._FPDF_GetLastError());
      try {
        pageCount = module._FPDF_GetPageCount(document);
        const end = Math.min(pageCount, pages.length + PAGES_PER_OPENING);
        while (pages.length < end) {
          if (performance.now() > deadline) throw processingTimeoutError(timeoutMs);
          pages.push(pageText(module, document, pages.length));
        }
      } finally {
        module._FPDF_CloseDocument(document);
      }
    } while (pages.length < pageCount);
    return pages;
  } finally {
    // PDFium reads the file in place, so the copy may only be freed once the document is closed.
    module.wasmExports.free(file);
  }
}

function loadPdfium(): Promise<Pdfium> {
  pdfium ??= (async () => {
    const { PDFiumModule } = await import('@hyzyla/pdfium');
    const module = (await PDFiumModule({})) as Pdfium;
    module._FPDF_InitLibrary();
    return module;
  })().catch((error: unknown) => {
    pdfium = undefined; // a later document tries again
    throw error;
  });
  return pdfium;
}

function pageText(module: Pdfium, document: number, index: number): string {
  const page = module._FPDF_LoadPage(document, index);
  // A page whose objects cannot be parsed is a broken file, as when the whole document cannot be.
  if (!page) throw new ExtractionError('corrupt', 'The file is not a valid PDF');
  try {
    const textPage = module._FPDFText_LoadPage(page);
    if (!textPage) throw new ExtractionError('corrupt', 'The file is not a valid PDF');
    try {
      const characters = module._FPDFText_CountChars(textPage);
      if (characters <= 0) return '';
      const buffer = allocate(module, (characters + 1) * UTF16_BYTES);
      try {
        // The count returned includes the terminating NUL.
        const written = module._FPDFText_GetText(textPage, 0, characters, buffer);
        const end = buffer + Math.max(0, written - 1) * UTF16_BYTES;
        // HEAPU8 is replaced whenever the WebAssembly memory grows, so it is read only after PDFium has run.
        return utf16.decode(module.HEAPU8.subarray(buffer, end));
      } finally {
        module.wasmExports.free(buffer);
      }
    } finally {
      module._FPDFText_ClosePage(textPage);
    }
  } finally {
    module._FPDF_ClosePage(page);
  }
}

function allocate(module: Pdfium, size: number): number {
  const pointer = module.wasmExports.malloc(size);
  // WebAssembly memory is capped (2-4 GiB), and a failed malloc returns 0 rather than throwing.
  if (!pointer) throw new ExtractionError('too_large', 'The document is too large to process');
  return pointer;
}

function loadError(code: number): ExtractionError {
  // SECURITY is an encryption scheme PDFium cannot open without credentials; to the user it is the same refusal.
  if (code === FPDF_ERR_PASSWORD || code === FPDF_ERR_SECURITY) {
    return new ExtractionError('unsupported', 'Password-protected PDFs are not supported');
  }
  return new ExtractionError('corrupt', 'The file is not a valid PDF');
}
