import { ExtractionError } from './extraction.error';
import {
  DECLARED_FILE_TYPES,
  type DeclaredFileType,
  type ExtractedDocument,
  type ExtractionOptions,
} from './extraction.types';
import { assertDeclaredType } from './file-type.sniffer';
import { PassageSplitter } from './passage.splitter';
import { decodeText } from './plain-text.decoder';
import { normaliseWhitespace } from './whitespace.normaliser';

export interface PassageStreamOptions extends ExtractionOptions {
  /** Receives the passages in order, a few at a time, as soon as each is complete. */
  onPassages: (passages: string[]) => void;
}

/**
 * Turns an uploaded document into search passages, handed to `onPassages` as they are completed, and answers the
 * length of its normalised text. A PDF's text is never put together whole: its passages are cut page after page.
 * Throws ExtractionError for problems with the document itself; its message is meant for the user.
 */
export async function extractPassages(
  type: DeclaredFileType,
  bytes: Buffer,
  options: PassageStreamOptions,
): Promise<{ contentLength: number }> {
  // Callers outside TypeScript (job payloads) may send anything.
  if (!DECLARED_FILE_TYPES.includes(type))
    throw new ExtractionError('unsupported', `Unsupported file type "${String(type)}"`);
  if (bytes.length === 0) throw new ExtractionError('no_text', 'The file is empty');
  assertDeclaredType(type, bytes);

  const splitter = new PassageSplitter();
  const emit = (passages: string[]) => {
    if (passages.length > 0) options.onPassages(passages);
  };
  let contentLength: number;
  if (type === 'pdf') {
    contentLength = await readPdfPages(bytes, options, (page) => emit(splitter.add(page)));
  } else {
    const text = await extractNormalisedText(type, bytes);
    if (text === '') throw new ExtractionError('no_text', 'The document has no text');
    emit(splitter.add(text));
    contentLength = text.length;
  }
  emit(splitter.finish());
  return { contentLength };
}

/** extractPassages with the passages collected. */
export async function extractDocument(
  type: DeclaredFileType,
  bytes: Buffer,
  options: ExtractionOptions = {},
): Promise<ExtractedDocument> {
  const passages: string[] = [];
  const { contentLength } = await extractPassages(type, bytes, {
    ...options,
    onPassages: (batch) => passages.push(...batch),
  });
  return { contentLength, passages };
}

/**
 * The PDF extractor is loaded on first use: an extraction thread loads only the libraries of the types it is
 * given, and a TXT needs none of them. Each non-empty page goes to `onPage` and is dropped from the document's
 * pages, so the text is held once (as pages), shrinking while passages are cut from it.
 */
async function readPdfPages(
  bytes: Buffer,
  options: ExtractionOptions,
  onPage: (page: string) => void,
): Promise<number> {
  const { extractCleanPdfPages, joinedLength } = await import('./pdf.extractor');
  // Normalised by the PDF extractor, page by page.
  const pages = await extractCleanPdfPages(bytes, { timeoutMs: options.timeoutMs });
  const contentLength = joinedLength(pages);
  for (let index = 0; index < pages.length; index++) {
    const page = pages[index];
    pages[index] = '';
    if (page !== '') onPage(page);
  }
  return contentLength;
}

/** mammoth alone takes about 90 ms to load, so it too is loaded on first use. */
async function extractNormalisedText(type: Exclude<DeclaredFileType, 'pdf'>, bytes: Buffer): Promise<string> {
  switch (type) {
    case 'docx': {
      const { extractDocx } = await import('./docx.extractor');
      return normaliseWhitespace(await extractDocx(bytes));
    }
    case 'txt':
      return normaliseWhitespace(decodeText(bytes));
  }
}
