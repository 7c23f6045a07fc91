import { Injectable } from '@nestjs/common';
import {
  Document,
  DocumentRefreshOutcome,
  DocumentsRepository,
  type IngestedPage,
  type IngestedPassage,
} from '@app/database';
import { PASSAGE_CUT_VERSION } from '@app/extraction';

export interface IngestionResult {
  passages: IngestedPassage[];
  pages: IngestedPage[];
  contentLength: number;
}

/** A refresh's changes: the pages as they now stand, and the passages of the pages that changed or are new. */
export interface RefreshResult {
  pages: IngestedPage[];
  /** Pages whose passages go: changed ones (replaced by `passages`) and gone ones. */
  replacedUrls: string[];
  passages: IngestedPassage[];
  outcome: Omit<DocumentRefreshOutcome, 'status' | 'finished_at' | 'error'>;
}

function refreshOutcome(
  status: DocumentRefreshOutcome['status'],
  counts: RefreshResult['outcome'],
  error: string | null,
): DocumentRefreshOutcome {
  return { status, finished_at: new Date().toISOString(), ...counts, error };
}

/**
 * The worker's writes for a document. Each runs in one transaction that first locks the document row and
 * checks it is still there and still processing, so a document deleted (or finished by another worker)
 * meanwhile is left alone, and re-running a job replaces its passages instead of adding to them.
 */
@Injectable()
export class DocumentStore {
  constructor(private readonly documents: DocumentsRepository) {}

  /** Stores passages and pages, marks the document active and releases its uploaded file. */
  async complete(documentId: number, result: IngestionResult): Promise<boolean> {
    return this.lockedUpdate(documentId, async (documents, document) => {
      await documents.replacePages(documentId, result.pages);
      await documents.deletePassages(documentId);
      await documents.insertPassages(document, result.passages, 0);
      await documents.markActive(documentId, result.contentLength, PASSAGE_CUT_VERSION);
      await documents.deleteFile(documentId);
    });
  }

  /**
   * Re-cuts the passages of the next active document an earlier cutter wrote, if any: its row locked (another worker
   * re-cutting at once takes the next one; a refresh waits), its passages replaced by `recut` of them and the version
   * recorded, in one transaction. Returns how many passages it now has, or undefined when none is left.
   */
  async recutNext(recut: (passages: IngestedPassage[]) => IngestedPassage[]): Promise<number | undefined> {
    return this.documents.transaction(async (documents) => {
      const document = await documents.lockNextToRecut(PASSAGE_CUT_VERSION);
      if (!document) return undefined;
      const passages = recut(await documents.passageTexts(document.id));
      await documents.deletePassages(document.id);
      await documents.insertPassages(document, passages, 0);
      await documents.setPassagesCut(document.id, PASSAGE_CUT_VERSION);
      return passages.length;
    });
  }

  /** Marks the document failed with a message for its owner; keeps the pages tried, drops any passages. */
  async fail(documentId: number, message: string, pages: IngestedPage[] = []): Promise<boolean> {
    return this.lockedUpdate(documentId, async (documents) => {
      if (pages.length > 0) await documents.replacePages(documentId, pages);
      await documents.deletePassages(documentId);
      await documents.markFailed(documentId, message.slice(0, 2000));
      await documents.deleteFile(documentId);
    });
  }

  /**
   * Applies a refresh to an active document: passages of unchanged pages stay, those of changed and gone pages
   * are replaced or removed, new pages add theirs. Nothing is written if the document was deleted meanwhile.
   */
  async applyRefresh(documentId: number, result: RefreshResult): Promise<boolean> {
    return this.lockedUpdate(
      documentId,
      async (documents, document) => {
        if (result.replacedUrls.length > 0) await documents.deletePagePassages(documentId, result.replacedUrls);
        const next = await documents.nextPassagePosition(documentId);
        await documents.insertPassages(document, result.passages, next);
        await documents.replacePages(documentId, result.pages);
        await documents.recordRefresh(
          documentId,
          result.pages.reduce((sum, page) => sum + page.characters, 0),
          refreshOutcome('succeeded', result.outcome, null),
        );
      },
      'active',
    );
  }

  /** A refresh that failed keeps the content it had; the failure is recorded for the owner to see. */
  async recordRefreshFailure(documentId: number, message: string): Promise<boolean> {
    const none = { pages_added: 0, pages_changed: 0, pages_removed: 0, pages_unchanged: 0 };
    return this.lockedUpdate(
      documentId,
      (documents) => documents.recordRefreshFailure(documentId, refreshOutcome('failed', none, message.slice(0, 2000))),
      'active',
    );
  }

  private async lockedUpdate(
    documentId: number,
    work: (documents: DocumentsRepository, document: Document) => Promise<unknown>,
    status: Document['status'] = 'processing',
  ): Promise<boolean> {
    return this.documents.transaction(async (documents) => {
      const document = await documents.lock(documentId);
      if (!document || document.status !== status) return false;
      await work(documents, document);
      return true;
    });
  }
}
