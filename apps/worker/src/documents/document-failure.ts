import { ExtractionError, type ExtractionErrorCode } from '@app/extraction';
import { type FailureReason, FailureReasons } from '@app/jobs';
import { type CrawledPage, type CrawlFailure, OutboundRequestError } from '@app/outbound-http';

/** The limits a document's processing runs under, which a timeout's reason names. */
export interface DocumentLimits {
  extractionTimeoutSeconds: number;
  crawlTimeoutSeconds: number;
}

const EXTRACTION_REASONS: Record<Exclude<ExtractionErrorCode, 'timeout'>, FailureReason> = {
  type_mismatch: FailureReasons.contentMismatch,
  corrupt: FailureReasons.corruptFile,
  no_text: FailureReasons.noText,
  too_large: FailureReasons.tooLarge,
  unsupported: FailureReasons.unsupportedFile,
};

const CRAWL_REASONS: Record<Exclude<CrawlFailure, 'http_status' | 'timeout'>, FailureReason> = {
  blocked_address: FailureReasons.notPublicAddress,
  invalid_url: FailureReasons.invalidUrl,
  unsupported_protocol: FailureReasons.unsupportedProtocol,
  redirect_refused: FailureReasons.redirectRefused,
  too_many_redirects: FailureReasons.tooManyRedirects,
  too_large: FailureReasons.tooLarge,
  network: FailureReasons.unreachable,
  tls: FailureReasons.tlsFailed,
  robots: FailureReasons.disallowedByRobots,
  content_type: FailureReasons.notAPage,
};

/**
 * Why a crawl found no text, from its first page (the start URL, or the first listed link): what that page met, or
 * no text at all on a page that was read.
 */
export function crawlFailureReason(first: CrawledPage | undefined): FailureReason {
  if (!first?.failure) return FailureReasons.noText;
  if (first.failure === 'http_status') return FailureReasons.siteAnswered(first.httpStatus ?? 0);
  if (first.failure === 'timeout') return FailureReasons.pageTimedOut;
  return CRAWL_REASONS[first.failure];
}

/** A failure that carries its class from where it was recognised (the crawl's first page, an HTTP answer). */
export class ClassifiedError extends Error {
  constructor(
    message: string,
    readonly reason: FailureReason,
  ) {
    super(message);
  }
}

/**
 * The class of what made a document's processing (or a website's refresh) fail, as the dashboard and the worker's
 * log show it; the document's own error message, which its owner reads, is written apart and unchanged.
 */
export function documentFailureReason(error: unknown, limits: DocumentLimits): FailureReason {
  if (error instanceof ClassifiedError) return error.reason;
  if (error instanceof ExtractionError)
    return error.code === 'timeout'
      ? FailureReasons.timeout(limits.extractionTimeoutSeconds)
      : EXTRACTION_REASONS[error.code];
  if (error instanceof OutboundRequestError)
    return error.code === 'timeout' ? FailureReasons.timeout((error.timeoutMs ?? 0) / 1000) : CRAWL_REASONS[error.code];
  // The whole crawl's time cap: AbortSignal.timeout's DOMException.
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError')
    return FailureReasons.timeout(limits.crawlTimeoutSeconds);
  return FailureReasons.unexpected(error);
}
