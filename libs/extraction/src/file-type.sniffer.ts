import { ExtractionError } from './extraction.error';
import type { DeclaredFileType } from './extraction.types';

export type SniffedFileType = 'pdf' | 'docx' | 'zip' | 'ole' | 'binary' | 'text';

const PDF_HEADER = Buffer.from('%PDF-', 'latin1');
const PDF_TRAILER = Buffer.from('%%EOF', 'latin1');
const ZIP_LOCAL_FILE_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const ZIP_EMPTY_ARCHIVE = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const OLE_COMPOUND_FILE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const WORD_DOCUMENT_PART = Buffer.from('word/document.xml', 'latin1');
const UTF16_LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16_BE_BOM = Buffer.from([0xfe, 0xff]);

/** PDF readers accept a header preceded by junk within the first kilobyte; so do we, if the file also ends like a PDF. */
const PDF_HEADER_SEARCH_LENGTH = 1024;
const BINARY_PROBE_LENGTH = 8 * 1024;

/** Identifies a file from its content alone, ignoring its name and declared type. */
export function sniffFileType(bytes: Buffer): SniffedFileType {
  if (looksLikePdf(bytes)) return 'pdf';
  if (startsWith(bytes, ZIP_LOCAL_FILE_HEADER) || startsWith(bytes, ZIP_EMPTY_ARCHIVE)) {
    // File names are stored uncompressed in a zip, so a byte search is enough for a first guess;
    // the DOCX extractor reads the real central directory before trusting it.
    return bytes.includes(WORD_DOCUMENT_PART) ? 'docx' : 'zip';
  }
  if (startsWith(bytes, OLE_COMPOUND_FILE)) return 'ole';
  if (hasNulBytes(bytes) && !startsWith(bytes, UTF16_LE_BOM) && !startsWith(bytes, UTF16_BE_BOM)) return 'binary';
  return 'text';
}

/** Refuses a file whose content contradicts the type the user declared for it. */
export function assertDeclaredType(declared: DeclaredFileType, bytes: Buffer): void {
  const sniffed = sniffFileType(bytes);
  const expected: Record<DeclaredFileType, SniffedFileType> = { pdf: 'pdf', docx: 'docx', txt: 'text' };
  if (sniffed === expected[declared]) return;

  if (declared === 'docx' && sniffed === 'ole') {
    throw new ExtractionError(
      'type_mismatch',
      'Legacy Word .doc files are not supported; please save the document as .docx and upload it again',
    );
  }
  throw new ExtractionError('type_mismatch', `The file content does not match the declared type "${declared}"`);
}

function looksLikePdf(bytes: Buffer): boolean {
  if (startsWith(bytes, PDF_HEADER)) return true;
  const headerOffset = bytes.subarray(0, PDF_HEADER_SEARCH_LENGTH).indexOf(PDF_HEADER);
  if (headerOffset < 0) return false;
  const tail = bytes.subarray(Math.max(0, bytes.length - PDF_HEADER_SEARCH_LENGTH));
  return tail.includes(PDF_TRAILER);
}

function hasNulBytes(bytes: Buffer): boolean {
  return bytes.subarray(0, BINARY_PROBE_LENGTH).includes(0);
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}
