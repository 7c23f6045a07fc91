import { fromBufferPromise, type Entry } from 'yauzl';
import { ExtractionError } from './extraction.error';

const MEGABYTE = 1024 * 1024;

/** Limits on what the archive says it will inflate to, checked before anything is inflated. */
export const DOCX_ARCHIVE_LIMITS = {
  maxDocumentPartBytes: 200 * MEGABYTE,
  maxTotalBytes: 300 * MEGABYTE,
  maxCompressionRatio: 200,
  /** Small entries may compress extremely well (repetitive XML) without being a threat. */
  compressionRatioCheckedAboveBytes: 10 * MEGABYTE,
} as const;

export const WORD_DOCUMENT_PART = 'word/document.xml';

interface ArchiveEntrySize {
  fileName: string;
  compressedSize: number;
  uncompressedSize: number;
}

/**
 * Refuses zip bombs and archives that are not Word documents by reading only the central directory (the
 * archive's table of contents); no entry is inflated. Sizes there can lie, which is why extraction also
 * runs in a thread with a memory cap.
 */
export async function assertSafeDocxArchive(bytes: Buffer): Promise<void> {
  const entries = await readCentralDirectory(bytes);
  const documentPart = entries.find((entry) => entry.fileName === WORD_DOCUMENT_PART);
  if (documentPart === undefined) {
    throw new ExtractionError('type_mismatch', 'The file is a ZIP archive but not a Word document');
  }
  if (documentPart.uncompressedSize > DOCX_ARCHIVE_LIMITS.maxDocumentPartBytes) throw tooLargeError();

  let totalBytes = 0;
  for (const entry of entries) {
    totalBytes += entry.uncompressedSize;
    if (totalBytes > DOCX_ARCHIVE_LIMITS.maxTotalBytes || hasSuspiciousCompressionRatio(entry)) throw tooLargeError();
  }
}

async function readCentralDirectory(bytes: Buffer): Promise<ArchiveEntrySize[]> {
  try {
    const archive = await fromBufferPromise(bytes, { lazyEntries: true, decodeStrings: true });
    const entries: ArchiveEntrySize[] = [];
    for await (const entry of archive.eachEntry()) entries.push(sizeOf(entry));
    archive.close();
    return entries;
  } catch {
    throw new ExtractionError('corrupt', 'The file is not a valid Word document');
  }
}

function sizeOf(entry: Entry): ArchiveEntrySize {
  return { fileName: entry.fileName, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize };
}

function hasSuspiciousCompressionRatio(entry: ArchiveEntrySize): boolean {
  if (entry.uncompressedSize <= DOCX_ARCHIVE_LIMITS.compressionRatioCheckedAboveBytes) return false;
  return entry.uncompressedSize > entry.compressedSize * DOCX_ARCHIVE_LIMITS.maxCompressionRatio;
}

function tooLargeError(): ExtractionError {
  return new ExtractionError('too_large', 'The document is too large to process');
}
