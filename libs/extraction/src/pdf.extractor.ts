import { ExtractionError, processingTimeoutError } from './extraction.error';
import { extractPagesWithPdfium } from './pdfium.extractor';
import { isPdftotextAvailable, PdftotextFailure, runPdftotext } from './pdftotext.runner';
import { removeRepeatedPageLines } from './repeated-page-lines.filter';
import { normaliseWhitespace } from './whitespace.normaliser';

/** `auto` prefers pdftotext when it is installed (the fastest) and falls back to PDFium. */
export type PdfEngine = 'auto' | 'pdftotext' | 'pdfium' | 'unpdf';

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
  const pages = removeRepeatedPageLines(rawPages.map(normaliseWhitespace));
  const text = normaliseWhitespace(pages.join('\n\n'));
  if (text.length < MINIMUM_TEXT_LENGTH)
    throw new ExtractionError('no_text', 'PDF has no extractable text (scanned PDF?)');
  return { text, pages };
}

async function extractPages(bytes: Buffer, engine: PdfEngine, timeoutMs: number): Promise<string[]> {
  if (engine === 'pdftotext' && !isPdftotextAvailable()) throw new Error('pdftotext is not installed');
  const usePdftotext = engine === 'pdftotext' || (engine === 'auto' && isPdftotextAvailable());
  if (engine === 'unpdf') return extractPagesWithUnpdf(bytes, timeoutMs);
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

async function extractPagesWithUnpdf(bytes: Buffer, timeoutMs: number): Promise<string[]> {
  // Loaded only when used (pdftotext, where installed, needs none of it), and before the try block: failing to
  // load PDF.js is our problem, not a sign of a corrupt file.
  const { extractText, getDocumentProxy, getResolvedPDFJS } = await import('unpdf');
  await getResolvedPDFJS();
  const deadline = startDeadline(timeoutMs);
  // PDF.js may take ownership of the array it is given, so it gets a copy rather than the caller's buffer.
  const loading = getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isEvalSupported: false });
  try {
    const document = await Promise.race([loading, deadline.expired]);
    const { text } = await Promise.race([extractText(document, { mergePages: false }), deadline.expired]);
    return text;
  } catch (error) {
    throw toExtractionError(error);
  } finally {
    deadline.cancel();
    // Also releases a document that finished loading only after the deadline.
    loading.then((document) => document.destroy()).catch(() => undefined);
  }
}

/**
 * PDF.js parses on the calling thread, so this cannot interrupt a long synchronous step; it stops waiting
 * between steps. The hard limit is the extraction thread, which is terminated.
 */
function startDeadline(timeoutMs: number): { expired: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(processingTimeoutError(timeoutMs)), timeoutMs);
  });
  // Races that finished first leave this promise unobserved; a rejection must not count as unhandled.
  expired.catch(() => undefined);
  return { expired, cancel: () => clearTimeout(timer) };
}

function toExtractionError(error: unknown): ExtractionError {
  if (error instanceof ExtractionError) return error;
  if (error instanceof Error && error.name === 'PasswordException') {
    return new ExtractionError('unsupported', 'Password-protected PDFs are not supported');
  }
  return new ExtractionError('corrupt', 'The file is not a valid PDF');
}
