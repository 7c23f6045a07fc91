import type { ExtractionErrorCode } from './extraction.error';
import type { DeclaredFileType, ExtractedDocument } from './extraction.types';

/** What the caller hands to the extraction thread (one pool task). */
export interface ExtractionThreadInput {
  type: DeclaredFileType;
  /** Transferred, not copied, so a large upload is not held twice. */
  bytes: ArrayBuffer;
  timeoutMs: number;
}

/** What the extraction thread answers to a task. Errors travel as plain data: classes do not survive cloning. */
export type ExtractionThreadOutcome =
  | { status: 'extracted'; document: ExtractedDocument }
  | { status: 'rejected'; code: ExtractionErrorCode; message: string }
  | { status: 'crashed'; message: string };
