import { ExtractionError } from './extraction.error';
import { extractPagesWithPdfium } from './pdfium.extractor';
import { isPdftotextAvailable, PdftotextFailure, runPdftotext } from './pdftotext.runner';
import { removeRepeatedPageLines } from './repeated-page-lines.filter';
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

/**
 * Extracts the text of a PDF page by page, drops running headers and footers, and refuses PDFs that have
 * (almost) no text, which are usually scans.
 */
export async function extractPdf(bytes: Buffer, options: PdfExtractionOptions = {}): Promise<ExtractedPdf> {
  const rawPages = await extractPages(bytes, options.engine ?? 'auto', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  // Normalised page by page, never as a whole: on a large PDF each pass over the whole text would leave several
  // copies of it (tens of MiB each) for the garbage collector at once. Pages cleaned and trimmed, joined by one
  // blank line, are the whole text normalised.
  const pages = removeRepeatedPageLines(rawPages.map(normaliseWhitespace)).map(normaliseWhitespace);
  const text = pages.filter((page) => page !== '').join('\n\n');
  if (text.length < MINIMUM_TEXT_LENGTH)
    throw new ExtractionError('no_text', 'PDF has no extractable text (scanned PDF?)');
  return { text, pages };
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
