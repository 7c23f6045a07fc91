import { ExtractionError, processingTimeoutError } from '@app/extraction';
import { FailureReasons } from '@app/jobs';
import { OutboundRequestError } from '@app/outbound-http';
import { crawlFailureReason, documentFailureReason } from './document-failure';

const limits = { extractionTimeoutSeconds: 180, crawlTimeoutSeconds: 300 };

describe('documentFailureReason', () => {
  it('names the class of a file that cannot be read, never its message', () => {
    const mismatch = new ExtractionError('type_mismatch', 'The file content does not match the declared type "pdf"');
    expect(documentFailureReason(mismatch, limits)).toBe('content does not match the declared type');
    expect(documentFailureReason(new ExtractionError('corrupt', 'The file is not a valid PDF'), limits)).toBe(
      'file is corrupt',
    );
    expect(documentFailureReason(processingTimeoutError(180_000), limits)).toBe('timeout after 180 s');
  });

  it('names a crawl refused or failed by its kind, without the URL or host the message carries', () => {
    const blocked = new OutboundRequestError('blocked_address', 'Refused to connect to 10.1.2.3: not a public address');
    expect(documentFailureReason(blocked, limits)).toBe('crawl refused: not a public address');
    const slow = new OutboundRequestError('timeout', 'No answer from a.example within 15000 ms', {
      timeoutMs: 15_000,
    });
    expect(documentFailureReason(slow, limits)).toBe('timeout after 15 s');
    const tls = new OutboundRequestError('tls', 'TLS with a.example failed: its certificate has expired');
    expect(documentFailureReason(tls, limits)).toBe('crawl failed: TLS handshake or certificate refused');
    expect(documentFailureReason(new DOMException('aborted', 'TimeoutError'), limits)).toBe('timeout after 300 s');
    expect(
      crawlFailureReason({ url: 'https://a.example/', status: 'failed', httpStatus: 404, failure: 'http_status' }),
    ).toBe('crawl failed: site answered HTTP 404');
    expect(crawlFailureReason({ url: 'https://a.example/', status: 'fetched', httpStatus: 200 })).toBe(
      'no text to extract',
    );
  });

  it('gives anything else only its class name, whatever its message holds', () => {
    class QueryFailedError extends Error {
      override name = 'QueryFailedError';
    }
    const reason = documentFailureReason(new QueryFailedError('password authentication failed for "app"'), limits);
    expect(reason).toBe('unexpected QueryFailedError');
    const odd = new Error('x');
    odd.name = 'sk_live 123: not a class name';
    expect(documentFailureReason(odd, limits)).toBe('unexpected error');
    expect(FailureReasons.afterAttempts(3, reason)).toBe('gave up after 3 attempts: unexpected QueryFailedError');
  });
});
