import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Document, type DocumentRefreshOutcome } from './entities/document.entity';
import { DocumentFile } from './entities/document-file.entity';
import { DocumentPage, type DocumentPageStatus } from './entities/document-page.entity';
import { Passage } from './entities/passage.entity';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';
import { TenantRepository } from './tenant.repository';
import type { Transaction } from './transactions';

/** A passage as ingestion cuts it and a re-cut reads it back. */
export interface IngestedPassage {
  content: string;
  sourceUrl: string | null;
}

/** A website page as ingestion fetched it (or tried to). */
export interface IngestedPage {
  url: string;
  status: DocumentPageStatus;
  httpStatus: number | null;
  title: string | null;
  characters: number;
  error: string | null;
  contentHash: string | null;
}

/** What ingestion made of a document: its passages and, for a website, the pages it fetched. */
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

/** The values of a new document, as the account's create gives them. */
export type NewDocument = Omit<Partial<Document>, 'id' | 'userId'>;

/** The longest error message a document keeps for its owner. */
const ERROR_MESSAGE_CHARACTERS = 2000;

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
 * The documents of knowledgebases: the row, its uploaded file, a website's pages and the passages search reads. The
 * account's statements take its owner id first (through a `TenantRepository<Document>`, so another account's
 * document behaves as a missing one); the worker's, by document or knowledgebase id, are the system's own. The
 * worker's writes of a document (`complete`, `fail`, `applyRefresh`, `recordRefreshFailure`) each run in one
 * transaction that first locks the row and checks its status, so a document deleted (or finished by another worker)
 * meanwhile is left alone, and a job run again replaces its passages instead of adding to them.
 */
@Injectable()
export class DocumentsRepository extends SqlRepository {
  /** The account's document rows. */
  private rows: TenantRepository<Document>;

  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
    this.rows = new TenantRepository(dataSource.getRepository(Document), reads);
  }

  override within(transaction: Transaction): this {
    const joined = super.within(transaction);
    joined.rows = this.rows.within(transaction);
    return joined;
  }

  // The account's.

  /** The knowledgebase's documents, newest first. */
  list(ownerId: number, knowledgebaseId: number): Promise<Document[]> {
    return this.rows.find(ownerId, { where: { knowledgebaseId }, order: { id: 'DESC' } });
  }

  findOne(ownerId: number, id: number): Promise<Document | null> {
    return this.rows.findOne(ownerId, id);
  }

  findInKnowledgebase(ownerId: number, knowledgebaseId: number, id: number): Promise<Document | null> {
    return this.rows.findOneWhere(ownerId, { id, knowledgebaseId });
  }

  /**
   * A new document and, for an upload, its file, kept until the worker has read it; in the caller's transaction
   * (`within`), which has locked the knowledgebase.
   */
  async create(ownerId: number, values: NewDocument, file: Buffer | undefined): Promise<Document> {
    const created = await this.rows.create(ownerId, values);
    if (file) await this.manager.insert(DocumentFile, { documentId: created.id, content: file });
    return created;
  }

  /** Returns false when the account has no such document. */
  delete(ownerId: number, id: number): Promise<boolean> {
    return this.rows.delete(ownerId, id);
  }

  /** Returns false when the account has no such document in the knowledgebase. */
  deleteInKnowledgebase(ownerId: number, knowledgebaseId: number, id: number): Promise<boolean> {
    return this.rows.deleteWhere(ownerId, { id, knowledgebaseId });
  }

  /**
   * A website document's pages, in crawl order, of the owner's document already found: pages have no owner column, so
   * the owner chooses only where the read runs (in an API request, a replica that has the owner's last write).
   */
  pages(ownerId: number, documentId: number): Promise<DocumentPage[]> {
    return this.reads.read(ownerId, (dataSource) =>
      dataSource.getRepository(DocumentPage).find({ where: { documentId }, order: { position: 'ASC' } }),
    );
  }

  // The worker's.

  /** The document, if it still exists and still needs processing. */
  findProcessing(documentId: number): Promise<Document | null> {
    return this.manager.getRepository(Document).findOne({ where: { id: documentId, status: 'processing' } });
  }

  /** The website document, if it still exists and is active (what a refresh works on). */
  findActiveWebsite(documentId: number): Promise<Document | null> {
    return this.manager
      .getRepository(Document)
      .findOne({ where: { id: documentId, status: 'active', type: 'website' } });
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

  /** Active website documents whose refresh is due, the longest due first, at most `limit`. */
  dueForRefresh(limit: number): Promise<{ id: number }[]> {
    return this.manager.query(
      `SELECT id FROM documents
        WHERE next_refresh_at <= now() AND status = 'active' AND type = 'website'
        ORDER BY next_refresh_at LIMIT $1`,
      [limit],
    );
  }

  /** Moves the document's next refresh one interval on from now. */
  async scheduleNextRefresh(documentId: number): Promise<void> {
    await this.manager.query(
      `UPDATE documents SET next_refresh_at = now() + make_interval(hours => refresh_interval_hours) WHERE id = $1`,
      [documentId],
    );
  }

  /** Documents processing for longer than `seconds` since their last change, the longest first, at most 500. */
  stuckProcessing(seconds: number): Promise<{ id: number; type: string }[]> {
    return this.manager.query(
      `SELECT id, type FROM documents
        WHERE status = 'processing' AND updated_at < now() - make_interval(secs => $1)
        ORDER BY updated_at LIMIT 500`,
      [seconds],
    );
  }

  /**
   * Counts one rescue of a document still processing for longer than `seconds`, and answers its number (none when
   * it no longer is). Touching updated_at restarts the deadline.
   */
  async claimRescue(documentId: number, seconds: number): Promise<number | undefined> {
    const [rows] = (await this.manager.query(
      `UPDATE documents SET sweep_count = sweep_count + 1, updated_at = now()
        WHERE id = $1 AND status = 'processing' AND updated_at < now() - make_interval(secs => $2)
        RETURNING sweep_count`,
      [documentId, seconds],
    )) as [{ sweep_count: number }[], number];
    return rows[0]?.sweep_count;
  }

  /**
   * Moves up to `batch` of the knowledgebase's passages to its language's text search configuration, read again by
   * the statement; answers how many it moved.
   */
  reindexPassages(knowledgebaseId: number, batch: number): Promise<number> {
    return this.changed(
      `UPDATE passages SET search_config = target.config
           FROM (SELECT knowledgebase_search_config($1) AS config) target
          WHERE passages.id IN (SELECT id FROM passages
                                 WHERE knowledgebase_id::bigint = $1 AND search_config <> knowledgebase_search_config($1)
                                 ORDER BY id::bigint LIMIT $2)`,
      [knowledgebaseId, batch],
    );
  }

  /** Stores passages and pages, marks the document active (its passages cut by `passagesCut`), releases its file. */
  complete(documentId: number, result: IngestionResult, passagesCut: number): Promise<boolean> {
    return this.lockedUpdate(documentId, async (documents, document) => {
      await documents.replacePages(documentId, result.pages);
      await documents.deletePassages(documentId);
      await documents.insertPassages(document, result.passages, 0);
      await documents.markActive(documentId, result.contentLength, passagesCut);
      await documents.deleteFile(documentId);
    });
  }

  /** Marks the document failed with a message for its owner; keeps the pages tried, drops any passages. */
  fail(documentId: number, message: string, pages: IngestedPage[] = []): Promise<boolean> {
    return this.lockedUpdate(documentId, async (documents) => {
      if (pages.length > 0) await documents.replacePages(documentId, pages);
      await documents.deletePassages(documentId);
      await documents.markFailed(documentId, message.slice(0, ERROR_MESSAGE_CHARACTERS));
      await documents.deleteFile(documentId);
    });
  }

  /**
   * Applies a refresh to an active document: passages of unchanged pages stay, those of changed and gone pages
   * are replaced or removed, new pages add theirs. Nothing is written if the document was deleted meanwhile.
   */
  applyRefresh(documentId: number, result: RefreshResult): Promise<boolean> {
    return this.lockedUpdate(
      documentId,
      async (documents, document) => {
        if (result.replacedUrls.length > 0) await documents.deletePagePassages(documentId, result.replacedUrls);
        const next = await documents.nextPassagePosition(documentId);
        await documents.insertPassages(document, result.passages, next);
        await documents.replacePages(documentId, result.pages);
        await documents.writeRefresh(
          documentId,
          result.pages.reduce((sum, page) => sum + page.characters, 0),
          refreshOutcome('succeeded', result.outcome, null),
        );
      },
      'active',
    );
  }

  /** A refresh that failed keeps the content it had; the failure is recorded for the owner to see. */
  recordRefreshFailure(documentId: number, message: string): Promise<boolean> {
    const none = { pages_added: 0, pages_changed: 0, pages_removed: 0, pages_unchanged: 0 };
    return this.lockedUpdate(
      documentId,
      (documents) =>
        documents.writeRefreshFailure(
          documentId,
          refreshOutcome('failed', none, message.slice(0, ERROR_MESSAGE_CHARACTERS)),
        ),
      'active',
    );
  }

  /**
   * Re-cuts the passages of the next active document an earlier cutter than `version` wrote, if any: its row locked
   * (another worker re-cutting at once takes the next one; a refresh waits), its passages replaced by `recut` of them
   * and the version recorded, in one transaction. Returns how many passages it now has, or undefined when none is left.
   */
  recutNext(version: number, recut: (passages: IngestedPassage[]) => IngestedPassage[]): Promise<number | undefined> {
    return this.transaction(async (documents) => {
      const document = await documents.lockNextToRecut(version);
      if (!document) return undefined;
      const passages = recut(await documents.passageTexts(document.id));
      await documents.deletePassages(document.id);
      await documents.insertPassages(document, passages, 0);
      await documents.setPassagesCut(document.id, version);
      return passages.length;
    });
  }

  /** `work` on the document row locked, if it is still there with `status`; answers whether it was. */
  private lockedUpdate(
    documentId: number,
    work: (documents: this, document: Document) => Promise<unknown>,
    status: Document['status'] = 'processing',
  ): Promise<boolean> {
    return this.transaction(async (documents) => {
      const document = await documents.lock(documentId);
      if (!document || document.status !== status) return false;
      await work(documents, document);
      return true;
    });
  }

  /** The document row, locked until the transaction ends. */
  private lock(documentId: number): Promise<Document | null> {
    return this.manager
      .getRepository(Document)
      .createQueryBuilder('document')
      .setLock('pessimistic_write')
      .where('document.id = :documentId', { documentId })
      .getOne();
  }

  /** Releases the uploaded file once its text is stored (or the document failed). */
  private async deleteFile(documentId: number): Promise<void> {
    await this.manager.delete(DocumentFile, { documentId });
  }

  private async markActive(documentId: number, contentLength: number, passagesCut: number): Promise<void> {
    await this.manager.update(
      Document,
      { id: documentId },
      { status: 'active', errorMessage: null, contentLength, passagesCut },
    );
  }

  private async markFailed(documentId: number, errorMessage: string): Promise<void> {
    await this.manager.update(Document, { id: documentId }, { status: 'failed', errorMessage, contentLength: 0 });
  }

  private async replacePages(documentId: number, pages: IngestedPage[]): Promise<void> {
    await this.manager.delete(DocumentPage, { documentId });
    if (pages.length === 0) return;
    await this.manager.insert(
      DocumentPage,
      pages.map((page, position) => ({ documentId, position, ...page })),
    );
  }

  private async deletePassages(documentId: number): Promise<void> {
    await this.manager.delete(Passage, { documentId });
  }

  /** Removes the passages of these pages of a website document. */
  private async deletePagePassages(documentId: number, urls: string[]): Promise<void> {
    await this.manager
      .createQueryBuilder()
      .delete()
      .from(Passage)
      .where('document_id = :documentId AND source_url IN (:...urls)', { documentId, urls })
      .execute();
  }

  /** The position the document's next passage takes. */
  private async nextPassagePosition(documentId: number): Promise<number> {
    const [{ next }] = await this.manager.query(
      `SELECT coalesce(max(position) + 1, 0)::int AS next FROM passages WHERE document_id = $1`,
      [documentId],
    );
    return next;
  }

  /** Adds the document's passages from `firstPosition` on, in batches. */
  private async insertPassages(
    document: Pick<Document, 'id' | 'userId' | 'knowledgebaseId'>,
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
      await this.manager.insert(Passage, rows.slice(start, start + INSERT_BATCH));
    }
  }

  /** The document's passages, in order, as a re-cut reads them. */
  private passageTexts(documentId: number): Promise<IngestedPassage[]> {
    return this.manager.find(Passage, {
      select: { content: true, sourceUrl: true },
      where: { documentId },
      order: { position: 'ASC' },
    });
  }

  /**
   * The next active document an earlier cutter than `version` wrote, locked (another worker re-cutting at once takes
   * the next one; a refresh waits); none when every one is cut by `version`.
   */
  private async lockNextToRecut(version: number): Promise<Document | undefined> {
    const [next]: { id: number }[] = await this.manager.query(
      `SELECT id FROM documents WHERE status = 'active' AND passages_cut < $1 ORDER BY id LIMIT 1
            FOR UPDATE SKIP LOCKED`,
      [version],
    );
    if (!next) return undefined;
    return this.manager.getRepository(Document).findOneByOrFail({ id: next.id });
  }

  /** Records the cutter that wrote the passages; not through the entity, so updated_at stays (a re-cut is no change). */
  private async setPassagesCut(documentId: number, version: number): Promise<void> {
    await this.manager.query(`UPDATE documents SET passages_cut = $2 WHERE id = $1`, [documentId, version]);
  }

  /** A refresh that succeeded: the content's new length and its outcome, and the next refresh scheduled. */
  private async writeRefresh(
    documentId: number,
    contentLength: number,
    outcome: DocumentRefreshOutcome,
  ): Promise<void> {
    await this.manager.query(
      `UPDATE documents SET content_length = $2, last_refreshed_at = $3, last_refresh = $4::jsonb,
                  next_refresh_at = now() + make_interval(hours => refresh_interval_hours), updated_at = now()
            WHERE id = $1`,
      [documentId, contentLength, outcome.finished_at, JSON.stringify(outcome)],
    );
  }

  /** A refresh that failed: its outcome, and the next refresh scheduled; the content stays as it was. */
  private async writeRefreshFailure(documentId: number, outcome: DocumentRefreshOutcome): Promise<void> {
    await this.manager.query(
      `UPDATE documents SET
                  last_refresh = $2::jsonb,
                  next_refresh_at = now() + make_interval(hours => refresh_interval_hours), updated_at = now()
            WHERE id = $1`,
      [documentId, JSON.stringify(outcome)],
    );
  }
}
