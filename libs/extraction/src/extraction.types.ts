/** The file types a user may declare when uploading a document. */
export type DeclaredFileType = 'pdf' | 'txt' | 'docx';

export const DECLARED_FILE_TYPES: readonly DeclaredFileType[] = ['pdf', 'txt', 'docx'];

export interface ExtractedDocument {
  /** Characters in the document's normalised text. */
  contentLength: number;
  /** The text split into overlapping passages for full-text search. */
  passages: string[];
}

export interface ExtractionOptions {
  /** Upper bound for external work such as the pdftotext child process. */
  timeoutMs?: number;
}
