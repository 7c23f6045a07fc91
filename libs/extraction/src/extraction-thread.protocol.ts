import type { MessagePort } from 'node:worker_threads';
import type { ExtractionErrorCode } from './extraction.error';
import type { DeclaredFileType } from './extraction.types';

/** What the caller hands to the extraction thread (one pool task). */
export interface ExtractionThreadInput {
  type: DeclaredFileType;
  /** Transferred, not copied, so a large upload is not held twice. */
  bytes: ArrayBuffer;
  timeoutMs: number;
  /** Where the thread posts the passages (string[] batches, in order) while it works. */
  passages: MessagePort;
}

/**
 * What the extraction thread answers to a task, once every batch of passages has been posted. Errors travel as
 * plain data: classes do not survive cloning.
 */
export type ExtractionThreadOutcome =
  | { status: 'extracted'; contentLength: number; passageCount: number }
  | { status: 'rejected'; code: ExtractionErrorCode; message: string }
  | { status: 'crashed'; message: string };
