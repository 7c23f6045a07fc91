import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  Document,
  DocumentFile,
  DocumentPage,
  DocumentPageStatus,
  DocumentRefreshOutcome,
  Passage,
} from '@app/database';
import { PASSAGE_CUT_VERSION } from '@app/extraction';

export interface IngestedPassage {
  content: string;
  sourceUrl: string | null;
}

export interface IngestedPage {
  url: string;
  status: DocumentPageStatus;
  httpStatus: number | null;
  title: string | null;
  characters: number;
  error: string | null;
  contentHash: string | null;
}

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

/** Bytes of an uploaded file read per query. */
const FILE_READ_SLICE_BYTES = 1024 * 1024;

/** Rows a batch insert may carry before Postgres' 65,535 bind-parameter limit gets near. */
const INSERT_BATCH = 1000;

/**
 * The worker's writes for a document. Each runs in one transaction that first locks the document row and
 * checks it is still there and still processing, so a document deleted (or finished by another worker)
 * meanwhile is left alone, and re-running a job replaces its passages instead of adding to them.
 */
@Injectable()
export class DocumentStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The document, if it still exists and still needs processing. */
  findPending(documentId: number): Promise<Document | null> {
    return this.dataSource.getRepository(Document).findOne({ where: { id: documentId, status: 'processing' } });
  }

  /**
   * The uploaded file, read a slice at a time in one snapshot. pg receives a bytea as hex text, so reading a 20 MiB
   * file in one query holds a 40 MB message and a 40 MB string while it is parsed: that raised a process's peak by
   * 190 MiB, where 1 MiB slices raised it by 20 MiB (the file itself) and took a quarter of the time (measured).
   */
  async fileContent(documentId: number): Promise<Buffer | null> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const [file] = await manager.query(
        `SELECT octet_length(content)::int AS size FROM document_files WHERE document_id = $1`,
        [documentId],
      );
      if (!file) return null;
      // Never a slice of the shared pool, so the extraction can take the whole block over (handOver).
      const content = Buffer.allocUnsafeSlow(file.size);
      for (let offset = 0; offset < content.length; offset += FILE_READ_SLICE_BYTES) {
        const [slice] = await manager.query(
          `SELECT substring(content FROM $2 FOR $3) AS part FROM document_files WHERE document_id = $1`,
          [documentId, offset + 1, FILE_READ_SLICE_BYTES],
        );
        (slice.part as Buffer).copy(content, offset);
      }
      return content;
    });
  }

  /** Stores passages and pages, marks the document active and releases its uploaded file. */
  async complete(documentId: number, result: IngestionResult): Promise<boolean> {
    return this.lockedUpdate(documentId, async (manager, document) => {
      await this.replacePages(manager, documentId, result.pages);
      await manager.delete(Passage, { documentId });
      await this.insertPassages(manager, document, result.passages, 0);
      await manager.update(
        Document,
        { id: documentId },
        {
          status: 'active',
          errorMessage: null,
          contentLength: result.contentLength,
          passagesCut: PASSAGE_CUT_VERSION,
        },
      );
      await manager.delete(DocumentFile, { documentId });
    });
  }

  /**
   * Re-cuts the passages of the next active document an earlier cutter wrote, if any: its row locked (another worker
   * re-cutting at once takes the next one; a refresh waits), its passages replaced by `recut` of them and the version
   * recorded, in one transaction. Returns how many passages it now has, or undefined when none is left.
   */
  async recutNext(recut: (passages: IngestedPassage[]) => IngestedPassage[]): Promise<number | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const [next]: { id: number }[] = await manager.query(
        `SELECT id FROM documents WHERE status = 'active' AND passages_cut < $1 ORDER BY id LIMIT 1
            FOR UPDATE SKIP LOCKED`,
        [PASSAGE_CUT_VERSION],
      );
      if (!next) return undefined;
      const document = await manager.getRepository(Document).findOneByOrFail({ id: next.id });
      const stored = await manager.find(Passage, {
        select: { content: true, sourceUrl: true },
        where: { documentId: document.id },
        order: { position: 'ASC' },
      });
      const passages = recut(stored);
      await manager.delete(Passage, { documentId: document.id });
      await this.insertPassages(manager, document, passages, 0);
      // Not through the entity: a re-cut is no change of the document's, so its updated_at stays.
      await manager.query(`UPDATE documents SET passages_cut = $2 WHERE id = $1`, [document.id, PASSAGE_CUT_VERSION]);
      return passages.length;
    });
  }

  /** Marks the document failed with a message for its owner; keeps the pages tried, drops any passages. */
  async fail(documentId: number, message: string, pages: IngestedPage[] = []): Promise<boolean> {
    return this.lockedUpdate(documentId, async (manager) => {
      if (pages.length > 0) await this.replacePages(manager, documentId, pages);
      await manager.delete(Passage, { documentId });
      await manager.update(
        Document,
        { id: documentId },
        { status: 'failed', errorMessage: message.slice(0, 2000), contentLength: 0 },
      );
      await manager.delete(DocumentFile, { documentId });
    });
  }

  /**
   * Applies a refresh to an active document: passages of unchanged pages stay, those of changed and gone pages
   * are replaced or removed, new pages add theirs. Nothing is written if the document was deleted meanwhile.
   */
  async applyRefresh(documentId: number, result: RefreshResult): Promise<boolean> {
    return this.lockedUpdate(
      documentId,
      async (manager, document) => {
        if (result.replacedUrls.length > 0) {
          await manager
            .createQueryBuilder()
            .delete()
            .from(Passage)
            .where('document_id = :documentId AND source_url IN (:...urls)', { documentId, urls: result.replacedUrls })
            .execute();
        }
        const [{ next }] = await manager.query(
          `SELECT coalesce(max(position) + 1, 0)::int AS next FROM passages WHERE document_id = $1`,
          [documentId],
        );
        await this.insertPassages(manager, document, result.passages, next);
        await this.replacePages(manager, documentId, result.pages);
        const outcome = refreshOutcome('succeeded', result.outcome, null);
        await manager.query(
          `UPDATE documents SET content_length = $2, last_refreshed_at = $3, last_refresh = $4::jsonb,
                  next_refresh_at = now() + make_interval(hours => refresh_interval_hours), updated_at = now()
            WHERE id = $1`,
          [
            documentId,
            result.pages.reduce((sum, page) => sum + page.characters, 0),
            outcome.finished_at,
            JSON.stringify(outcome),
          ],
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
      (manager) =>
        manager.query(
          `UPDATE documents SET
                  last_refresh = $2::jsonb,
                  next_refresh_at = now() + make_interval(hours => refresh_interval_hours), updated_at = now()
            WHERE id = $1`,
          [documentId, JSON.stringify(refreshOutcome('failed', none, message.slice(0, 2000)))],
        ),
      'active',
    );
  }

  private async insertPassages(
    manager: EntityManager,
    document: Document,
    passages: IngestedPassage[],
    firstPosition: number,
  ): Promise<void> {
    const rows = passages.map((passage, index) => ({
      userId: document.userId,
      knowledgebaseId: document.knowledgebaseId,
      documentId: document.id,
      position: firstPosition + index,
      content: passage.content,
      sourceUrl: passage.sourceUrl,
    }));
    for (let start = 0; start < rows.length; start += INSERT_BATCH) {
      await manager.insert(Passage, rows.slice(start, start + INSERT_BATCH));
    }
  }

  private async replacePages(manager: EntityManager, documentId: number, pages: IngestedPage[]): Promise<void> {
    await manager.delete(DocumentPage, { documentId });
    if (pages.length === 0) return;
    await manager.insert(
      DocumentPage,
      pages.map((page, position) => ({ documentId, position, ...page })),
    );
  }

  private async lockedUpdate(
    documentId: number,
    work: (manager: EntityManager, document: Document) => Promise<unknown>,
    status: Document['status'] = 'processing',
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const document = await manager
        .getRepository(Document)
        .createQueryBuilder('document')
        .setLock('pessimistic_write')
        .where('document.id = :documentId', { documentId })
        .getOne();
      if (!document || document.status !== status) return false;
      await work(manager, document);
      return true;
    });
  }
}
