import { ExtractionError } from './extraction.error';
import {
  DECLARED_FILE_TYPES,
  type DeclaredFileType,
  type ExtractedDocument,
  type ExtractionOptions,
} from './extraction.types';
import { assertDeclaredType } from './file-type.sniffer';
import { splitIntoPassages } from './passage.splitter';
import { decodeText } from './plain-text.decoder';
import { normaliseWhitespace } from './whitespace.normaliser';

/**
 * Turns an uploaded document into normalised text and search passages. Throws ExtractionError for problems
 * with the document itself; its message is meant for the user.
 */
export async function extractDocument(
  type: DeclaredFileType,
  bytes: Buffer,
  options: ExtractionOptions = {},
): Promise<ExtractedDocument> {
  // Callers outside TypeScript (job payloads) may send anything.
  if (!DECLARED_FILE_TYPES.includes(type))
    throw new ExtractionError('unsupported', `Unsupported file type "${String(type)}"`);
  if (bytes.length === 0) throw new ExtractionError('no_text', 'The file is empty');
  assertDeclaredType(type, bytes);

  const text = await extractNormalisedText(type, bytes, options);
  if (text === '') throw new ExtractionError('no_text', 'The document has no text');
  return { text, passages: splitIntoPassages(text) };
}

/**
 * The PDF and Word extractors are loaded on first use: an extraction thread loads only the libraries of the
 * types it is given (mammoth alone takes about 90 ms to load), and a TXT needs none of them.
 */
async function extractNormalisedText(
  type: DeclaredFileType,
  bytes: Buffer,
  options: ExtractionOptions,
): Promise<string> {
  switch (type) {
    case 'pdf': {
      const { extractPdf } = await import('./pdf.extractor');
      // Normalised by the PDF extractor, page by page.
      return (await extractPdf(bytes, { timeoutMs: options.timeoutMs })).text;
    }
    case 'docx': {
      const { extractDocx } = await import('./docx.extractor');
      return normaliseWhitespace(await extractDocx(bytes));
    }
    case 'txt':
      return normaliseWhitespace(decodeText(bytes));
  }
}
