import { Injectable, Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { Document, DocumentPage, DocumentsRepository, type IngestedPage, RefreshResult } from '@app/database';
import {
  DocumentJob,
  FailureReasons,
  HandlesJob,
  JobQueue,
  Jobs,
  isFinalAttempt,
  type JobFailed,
  jobFailed,
} from '@app/jobs';
import { OutboundRequestError } from '@app/outbound-http';
import { DocumentIngestion, isRetryableStatus, pagePassages, readPages } from './document-ingestion.service';
import { ClassifiedError, crawlFailureReason, documentFailureReason } from './document-failure';
import { errorMessage } from '@app/platform';

/** Documents one pass of the schedule enqueues at most; the rest wait for the next pass. */
const DUE_BATCH = 500;
/** A page answering these is gone; its passages go with it. */
const GONE_STATUSES = new Set([404, 410]);

/**
 * Re-crawls website documents. A page whose text hashes as before keeps its passages; changed pages replace
 * theirs, new pages add theirs, pages gone (404/410, or no longer linked) lose theirs, and a page that failed
 * in a way that may pass (a network error, 5xx, 429) keeps its previous content. A refresh that fails as a
 * whole keeps the previous content and records the error.
 */
@Injectable()
export class DocumentRefresh {
  private readonly logger = new Logger(DocumentRefresh.name);

  constructor(
    private readonly ingestion: DocumentIngestion,
    private readonly jobs: JobQueue,
    private readonly documents: DocumentsRepository,
  ) {}

  /**
   * Enqueues the refreshes that are due, on their own queue so that uploads never wait behind them. The next
   * due time moves only once its job is enqueued, so a failed enqueue is tried again on the next pass.
   */
  @HandlesJob(Jobs.enqueueDueRefreshes)
  async enqueueDue(): Promise<{ enqueued: number }> {
    const due = await this.documents.dueForRefresh(DUE_BATCH);
    for (const { id } of due) {
      await this.jobs.enqueue(Jobs.refreshDocument, { documentId: id });
      await this.documents.scheduleNextRefresh(id);
    }
    if (due.length > 0) this.logger.log({ enqueued: due.length }, 'enqueued due website refreshes');
    return { enqueued: due.length };
  }

  @HandlesJob(Jobs.refreshDocument)
  async refresh({ documentId }: DocumentJob, job: Job): Promise<{ status: string } | JobFailed> {
    const document = await this.documents.findActiveWebsite(documentId);
    if (!document) return { status: 'skipped' };

    let result: RefreshResult;
    try {
      result = await this.changes(document);
    } catch (error) {
      const transient = !(error instanceof RefreshFailed) && !isPermanent(error);
      if (transient && !isFinalAttempt(job)) throw error;
      await this.documents.recordRefreshFailure(documentId, errorMessage(error));
      this.logger.warn({ documentId, error: errorMessage(error) }, 'website refresh failed');
      const reason = documentFailureReason(error, this.ingestion.limits());
      return jobFailed(transient ? FailureReasons.afterAttempts(job.attemptsMade + 1, reason) : reason);
    }
    const applied = await this.documents.applyRefresh(documentId, result);
    return { status: applied ? 'refreshed' : 'skipped' };
  }

  private async changes(document: Document): Promise<RefreshResult> {
    const previous = await this.documents.pages(document.userId, document.id);
    const before = new Map(previous.filter((page) => page.status === 'fetched').map((page) => [page.url, page]));
    const crawled = await this.ingestion.crawl(document);
    const { pages, texts } = readPages(crawled);
    if (texts.size === 0) {
      const first = crawled[0];
      if (isRetryableStatus(first?.httpStatus))
        throw new ClassifiedError(
          `The site answered HTTP ${first.httpStatus}`,
          FailureReasons.siteAnswered(first.httpStatus!),
        );
      throw new RefreshFailed(
        `No text could be extracted from the website${first?.error ? `: ${first.error}` : ''}`,
        crawlFailureReason(first),
      );
    }

    const outcome = { pages_added: 0, pages_changed: 0, pages_removed: 0, pages_unchanged: 0 };
    const result: RefreshResult = { pages: [], replacedUrls: [], passages: [], outcome };
    const visited = new Set<string>();
    for (const page of pages) {
      const old = before.get(page.url);
      const text = texts.get(page.url);
      if (visited.has(page.url)) continue;
      visited.add(page.url);
      if (text !== undefined) {
        result.pages.push(page);
        if (!old) {
          outcome.pages_added++;
        } else if (old.contentHash === page.contentHash) {
          outcome.pages_unchanged++;
          continue;
        } else {
          outcome.pages_changed++;
          result.replacedUrls.push(page.url);
        }
        result.passages.push(...pagePassages(page.url, text));
      } else if (old && !isGone(page)) {
        // Failed for now: the page keeps what it had.
        result.pages.push(keptPage(old));
        outcome.pages_unchanged++;
      } else {
        result.pages.push(page);
        if (old) {
          outcome.pages_removed++;
          result.replacedUrls.push(page.url);
        }
      }
    }
    for (const old of before.values()) {
      if (visited.has(old.url)) continue;
      outcome.pages_removed++;
      result.replacedUrls.push(old.url);
    }
    return result;
  }
}

/** A refresh that retrying cannot fix. */
class RefreshFailed extends ClassifiedError {}

function isPermanent(error: unknown): boolean {
  return error instanceof OutboundRequestError && !error.transient;
}

/** Gone: the site says so (404, 410) or no longer lets it be read (robots.txt). */
function isGone(page: IngestedPage): boolean {
  return page.status === 'skipped' || (page.httpStatus !== null && GONE_STATUSES.has(page.httpStatus));
}

function keptPage(page: DocumentPage): IngestedPage {
  return {
    url: page.url,
    status: page.status,
    httpStatus: page.httpStatus,
    title: page.title,
    characters: page.characters,
    error: page.error,
    contentHash: page.contentHash,
  };
}
