export const EXTRACTION_ERROR_CODES = [
  'no_text',
  'corrupt',
  'type_mismatch',
  'too_large',
  'timeout',
  'unsupported',
] as const;

export type ExtractionErrorCode = (typeof EXTRACTION_ERROR_CODES)[number];

/**
 * A problem with the uploaded document itself (as opposed to a bug or an outage). The message is shown to
 * users as the document's error message, so it must be understandable without knowing the internals.
 */
export class ExtractionError extends Error {
  override readonly name = 'ExtractionError';

  constructor(
    readonly code: ExtractionErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isExtractionErrorCode(value: unknown): value is ExtractionErrorCode {
  return typeof value === 'string' && (EXTRACTION_ERROR_CODES as readonly string[]).includes(value);
}

/** One wording for every timeout, whichever layer (child process or thread) notices it first. */
export function processingTimeoutError(timeoutMs: number): ExtractionError {
  const seconds = Math.max(1, Math.round(timeoutMs / 1000));
  return new ExtractionError(
    'timeout',
    `Processing took longer than ${seconds} ${seconds === 1 ? 'second' : 'seconds'}`,
  );
}
