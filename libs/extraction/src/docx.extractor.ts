import mammoth from 'mammoth';
import { assertSafeDocxArchive } from './docx-archive.guard';
import { ExtractionError } from './extraction.error';

/** Extracts the plain text of a .docx file (paragraphs, headings, table cells), refusing zip bombs first. */
export async function extractDocx(bytes: Buffer): Promise<string> {
  await assertSafeDocxArchive(bytes);
  const text = await readRawText(bytes);
  if (text.trim() === '') throw new ExtractionError('no_text', 'Word document has no text');
  return text;
}

async function readRawText(bytes: Buffer): Promise<string> {
  try {
    const result = await mammoth.extractRawText({ buffer: bytes });
    return result.value;
  } catch {
    throw new ExtractionError('corrupt', 'The file is not a valid Word document');
  }
}
