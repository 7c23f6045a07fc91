import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import pLimit from 'p-limit';
import { AppConfig } from '@app/config';
import {
  ExtractionError,
  OWN_THREAD_MIN_BYTES,
  normaliseWhitespace,
  PASSAGE_CUT_VERSION,
  runExtractionInThread,
  splitIntoPassages,
} from '@app/extraction';
import {
  Document,
  DocumentsRepository,
  FileDocumentType,
  IngestedPage,
  IngestedPassage,
  IngestionResult,
} from '@app/database';
import {
  DocumentJob,
  type FailureReason,
  FailureReasons,
  HandlesJob,
  isFinalAttempt,
  type JobFailed,
  jobFailed,
  Jobs,
} from '@app/jobs';
import { CrawledPage, OutboundHttp, OutboundRequestError, crawlWebsite } from '@app/outbound-http';
import { JobMetrics } from '../job-metrics';
import { CRAWLER_USER_AGENT } from './crawler-user-agent';
import { ClassifiedError, crawlFailureReason, documentFailureReason, type DocumentLimits } from './document-failure';
import { PassageEmbedding } from './passage-embedding.service';
import { errorMessage } from '@app/platform';

/** A failure worth retrying (the site is down, answered 5xx or 429); anything else fails the document at once. */
export class TransientIngestionError extends ClassifiedError {}

/**
 * A failure retrying cannot fix, with the message shown to the owner as the document's `error_message` and its
 * class for the dashboard and the log.
 */
export class PermanentIngestionError extends ClassifiedError {
  constructor(
    message: string,
    reason: FailureReason,
    readonly pages: IngestedPage[] = [],
  ) {
    super(message, reason);
  }
}

/** The longest a whole website crawl may take. */
const CRAWL_TIME_CAP_MS = 5 * 60_000;

const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);

/**
 * Turns a document into passages. Files are parsed in a worker thread (time and memory capped, so BullMQ
 * keeps renewing the job lock); websites are crawled through the guarded HTTP client.
 */
@Injectable()
export class DocumentIngestion {
  private readonly logger = new Logger(DocumentIngestion.name);
  /**
   * Large files read, extracted and stored at once in this process. Each peaks at about 140 MiB in its thread
   * besides its passages here: four of the largest PDFs at once (WORKER_CONCURRENCY's default) took a worker to
   * 770-837 MB, one at a time to 413-427 (docs/benchmarks.md, section 4). The rest wait here, their jobs active
   * (BullMQ keeps renewing their locks) and their extraction's time limit not yet started.
   */
  private readonly largeFiles: pLimit.Limit;

  constructor(
    private readonly config: AppConfig,
    private readonly documents: DocumentsRepository,
    private readonly http: OutboundHttp,
    private readonly metrics: JobMetrics,
    private readonly embedding: PassageEmbedding,
  ) {
    this.largeFiles = pLimit(config.workerLargeFilesAtOnce);
    metrics.watchLargeFiles(this.largeFiles);
  }

  @HandlesJob(Jobs.processDocument)
  async process({ documentId }: DocumentJob, job: Job): Promise<{ status: string } | JobFailed> {
    const document = await this.documents.findProcessing(documentId);
    if (!document) return { status: 'skipped' };

    try {
      const ingest = async () =>
        this.documents.complete(
          documentId,
          document.type === 'website' ? await this.readWebsite(document) : await this.readFile(document),
          PASSAGE_CUT_VERSION,
        );
      const stored = isLargeFile(document) ? await this.largeFiles(ingest) : await ingest();
      if (stored) {
        this.metrics.documentFinished(document.type, 'active');
        // Searchable by its words now; by meaning once embedded (a lost enqueue is found by the embeddings sweep).
        await this.embedding.enqueue(documentId).catch((error: unknown) => {
          this.logger.warn({ documentId, error: errorMessage(error) }, 'embedding not queued');
        });
      }
      return { status: stored ? 'active' : 'skipped' };
    } catch (error) {
      const permanent = this.permanentFailure(error);
      if (permanent) {
        if (await this.documents.fail(documentId, permanent.message, permanent.pages)) {
          this.metrics.documentFinished(document.type, 'failed');
        }
        return jobFailed(documentFailureReason(error, this.limits()));
      }
      if (isFinalAttempt(job)) {
        this.logger.warn({ documentId, error: errorMessage(error) }, 'document failed after its last attempt');
        const failed = await this.documents.fail(
          documentId,
          `Processing failed after ${job.attemptsMade + 1} attempts: ${errorMessage(error)}`,
        );
        if (failed) this.metrics.documentFinished(document.type, 'failed');
        return jobFailed(
          FailureReasons.afterAttempts(job.attemptsMade + 1, documentFailureReason(error, this.limits())),
        );
      }
      throw error;
    }
  }

  /** The limits a timeout's reason names. */
  limits(): DocumentLimits {
    return {
      extractionTimeoutSeconds: this.config.extractionTimeoutSeconds,
      crawlTimeoutSeconds: CRAWL_TIME_CAP_MS / 1000,
    };
  }

  /** A failure retrying cannot fix (its message the owner's), or null for one worth another attempt. */
  private permanentFailure(error: unknown): { message: string; pages?: IngestedPage[] } | null {
    if (error instanceof PermanentIngestionError) return error;
    if (error instanceof ExtractionError) return error;
    if (error instanceof OutboundRequestError && !error.transient) return error;
    return null;
  }

  private async readFile(document: Document): Promise<IngestionResult> {
    const bytes = await this.documents.fileContent(document.id);
    if (!bytes)
      throw new PermanentIngestionError(
        'The uploaded file is no longer available; upload it again.',
        FailureReasons.fileGone,
      );
    const { contentLength, passages } = await runExtractionInThread(document.type as FileDocumentType, bytes, {
      timeoutMs: this.config.extractionTimeoutSeconds * 1000,
      // Read for this extraction alone: moved to the thread, not held here besides a copy there.
      handOver: true,
    });
    return {
      passages: passages.map((content) => ({ content, sourceUrl: null })),
      pages: [],
      contentLength,
    };
  }

  private async readWebsite(document: Document): Promise<IngestionResult> {
    const crawled = await this.crawl(document);
    const { pages, texts } = readPages(crawled);
    const passages: IngestedPassage[] = [...texts].flatMap(([url, text]) => pagePassages(url, text));
    const contentLength = pages.reduce((sum, page) => sum + page.characters, 0);

    if (passages.length === 0) {
      const first = crawled[0];
      if (first?.httpStatus !== undefined && RETRYABLE_STATUSES.has(first.httpStatus)) {
        throw new TransientIngestionError(
          `The site answered HTTP ${first.httpStatus}`,
          FailureReasons.siteAnswered(first.httpStatus),
        );
      }
      const reason = first?.error ? `: ${first.error}` : '';
      throw new PermanentIngestionError(
        `No text could be extracted from the website${reason}`,
        crawlFailureReason(first),
        pages,
      );
    }
    return { passages, pages, contentLength };
  }

  /** The website's pages as the crawler finds them now: the start URL and its links, then the listed links. */
  async crawl(document: Document): Promise<CrawledPage[]> {
    const signal = AbortSignal.timeout(CRAWL_TIME_CAP_MS);
    const crawl = (start: { url: string } | { links: string[] }) =>
      crawlWebsite({
        client: this.http.client,
        userAgent: CRAWLER_USER_AGENT,
        start,
        relativeLinksLimit: document.relativeLinksLimit ?? 0,
        politenessDelayMs: this.config.crawlDelayMs,
        signal,
      });

    const crawled: CrawledPage[] = document.sourceUrl ? await crawl({ url: document.sourceUrl }) : [];
    const seen = new Set(crawled.map((page) => page.url));
    const links = (document.sourceLinks ?? []).filter((link) => !seen.has(link));
    if (links.length > 0) crawled.push(...(await crawl({ links })));
    return crawled;
  }
}

/** A file that gets an extraction thread of its own, and waits for a large file's turn. */
function isLargeFile(document: Document): boolean {
  return document.type !== 'website' && (document.fileSize ?? 0) >= OWN_THREAD_MIN_BYTES;
}

/** A page answering one of these may be back later; its previous content is worth keeping meanwhile. */
export function isRetryableStatus(status: number | undefined): boolean {
  return status !== undefined && RETRYABLE_STATUSES.has(status);
}

/** The pages to record, and the text of each page that has some, by URL (the first page of a URL wins). */
export function readPages(crawled: CrawledPage[]): { pages: IngestedPage[]; texts: Map<string, string> } {
  const pages: IngestedPage[] = [];
  const texts = new Map<string, string>();
  for (const page of crawled) {
    const text = page.status === 'fetched' && page.text ? normaliseWhitespace(page.text) : '';
    const counted = text !== '' && !texts.has(page.url);
    if (counted) texts.set(page.url, text);
    pages.push({
      url: page.url,
      status: page.status,
      httpStatus: page.httpStatus ?? null,
      title: page.title?.slice(0, 1000) ?? null,
      characters: counted ? text.length : 0,
      error: page.error ?? null,
      contentHash: counted ? createHash('sha256').update(text).digest('hex') : null,
    });
  }
  return { pages, texts };
}

export function pagePassages(url: string, text: string): IngestedPassage[] {
  return splitIntoPassages(text).map((content) => ({ content, sourceUrl: url }));
}
