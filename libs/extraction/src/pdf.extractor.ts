import { ExtractionError } from './extraction.error';
import { extractPagesWithPdfium } from './pdfium.extractor';
import { isPdftotextAvailable, PdftotextFailure, runPdftotext } from './pdftotext.runner';
import { repeatedPageLinesRemover } from './repeated-page-lines.filter';
import { normaliseWhitespace } from './whitespace.normaliser';

/** `auto` prefers pdftotext when it is installed (the fastest) and falls back to PDFium. */
export type PdfEngine = 'auto' | 'pdftotext' | 'pdfium';

export interface PdfExtractionOptions {
  timeoutMs?: number;
  engine?: PdfEngine;
}

export interface ExtractedPdf {
  text: string;
  pages: string[];
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** Below this a PDF is almost certainly scanned images, perhaps with a stray page number or stamp. */
const MINIMUM_TEXT_LENGTH = 20;
const PAGE_SEPARATOR = '\n\n';

/**
 * Extracts the text of a PDF page by page, drops running headers and footers, and refuses PDFs that have
 * (almost) no text, which are usually scans.
 */
export async function extractPdf(bytes: Buffer, options: PdfExtractionOptions = {}): Promise<ExtractedPdf> {
  const pages = await extractCleanPdfPages(bytes, options);
  return { text: pages.filter((page) => page !== '').join(PAGE_SEPARATOR), pages };
}

/**
 * The pages of extractPdf, without joining them: the non-empty ones joined by one blank line are its text, which a
 * caller that only splits the text into passages never needs whole.
 */
export async function extractCleanPdfPages(bytes: Buffer, options: PdfExtractionOptions = {}): Promise<string[]> {
  const pages = await extractPages(bytes, options.engine ?? 'auto', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  // Normalised page by page, never as a whole: on a large PDF each pass over the whole text would leave several
  // copies of it (tens of MiB each) for the garbage collector at once. Pages cleaned and trimmed, joined by one
  // blank line, are the whole text normalised. Each page is replaced in place, so the document's text is held
  // once, not once per step.
  for (let index = 0; index < pages.length; index++) pages[index] = normaliseWhitespace(pages[index]);
  const removeRepeatedLines = repeatedPageLinesRemover(pages);
  for (let index = 0; index < pages.length; index++) {
    pages[index] = normaliseWhitespace(removeRepeatedLines(pages[index]));
  }
  if (joinedLength(pages) < MINIMUM_TEXT_LENGTH)
    throw new ExtractionError('no_text', 'PDF has no extractable text (scanned PDF?)');
  return pages;
}

/** The length of the non-empty pages joined by one blank line. */
export function joinedLength(pages: readonly string[]): number {
  let length = 0;
  let joined = 0;
  for (const page of pages) {
    if (page === '') continue;
    length += page.length;
    joined += 1;
  }
  return joined === 0 ? 0 : length + (joined - 1) * PAGE_SEPARATOR.length;
}

async function extractPages(bytes: Buffer, engine: PdfEngine, timeoutMs: number): Promise<string[]> {
  if (engine === 'pdftotext' && !isPdftotextAvailable()) throw new Error('pdftotext is not installed');
  const usePdftotext = engine === 'pdftotext' || (engine === 'auto' && isPdftotextAvailable());
  if (!usePdftotext) return extractPagesWithPdfium(bytes, timeoutMs);
  try {
    return await runPdftotext(bytes, timeoutMs);
  } catch (error) {
    // pdftotext rejects some files PDFium can still read, so its failure alone does not make a file corrupt.
    if (error instanceof PdftotextFailure && engine === 'auto') return extractPagesWithPdfium(bytes, timeoutMs);
    if (error instanceof PdftotextFailure) throw new ExtractionError('corrupt', 'The file is not a valid PDF');
    throw error;
  }
}
