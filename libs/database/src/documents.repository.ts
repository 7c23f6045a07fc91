import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Document, type DocumentRefreshOutcome } from './entities/document.entity';
import { DocumentFile } from './entities/document-file.entity';
import { DocumentPage, type DocumentPageStatus } from './entities/document-page.entity';
import { Passage } from './entities/passage.entity';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

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

/** Bytes of an uploaded file read per query. */
const FILE_READ_SLICE_BYTES = 1024 * 1024;

/** Rows a batch insert may carry before Postgres' 65,535 bind-parameter limit gets near. */
const INSERT_BATCH = 1000;

/**
 * Documents' own tables besides the row `TenantRepository<Document>` reads and writes for the API: the uploaded file,
 * the website's pages, the passages and the bookkeeping of the worker's processing, refreshes, sweeps, re-cuts and
 * re-indexes. The pages' read takes the owner; the worker's other statements, by document or knowledgebase id, are
 * the system's own, and its writes run in the transaction `DocumentStore` opens on the locked document row.
 */
@Injectable()
export class DocumentsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
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

  /** Keeps an upload's file until the worker has read it; run in the transaction that creates the document. */
  async insertFile(documentId: number, content: Buffer): Promise<void> {
    await this.manager.insert(DocumentFile, { documentId, content });
  }

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

  /** The document row, locked until the transaction ends. */
  lock(documentId: number): Promise<Document | null> {
    return this.manager
      .getRepository(Document)
      .createQueryBuilder('document')
      .setLock('pessimistic_write')
      .where('document.id = :documentId', { documentId })
      .getOne();
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

  /** Releases the uploaded file once its text is stored (or the document failed). */
  async deleteFile(documentId: number): Promise<void> {
    await this.manager.delete(DocumentFile, { documentId });
  }

  async markActive(documentId: number, contentLength: number, passagesCut: number): Promise<void> {
    await this.manager.update(
      Document,
      { id: documentId },
      { status: 'active', errorMessage: null, contentLength, passagesCut },
    );
  }

  async markFailed(documentId: number, errorMessage: string): Promise<void> {
    await this.manager.update(Document, { id: documentId }, { status: 'failed', errorMessage, contentLength: 0 });
  }

  async replacePages(documentId: number, pages: IngestedPage[]): Promise<void> {
    await this.manager.delete(DocumentPage, { documentId });
    if (pages.length === 0) return;
    await this.manager.insert(
      DocumentPage,
      pages.map((page, position) => ({ documentId, position, ...page })),
    );
  }

  async deletePassages(documentId: number): Promise<void> {
    await this.manager.delete(Passage, { documentId });
  }

  /** Removes the passages of these pages of a website document. */
  async deletePagePassages(documentId: number, urls: string[]): Promise<void> {
    await this.manager
      .createQueryBuilder()
      .delete()
      .from(Passage)
      .where('document_id = :documentId AND source_url IN (:...urls)', { documentId, urls })
      .execute();
  }

  /** The position the document's next passage takes. */
  async nextPassagePosition(documentId: number): Promise<number> {
    const [{ next }] = await this.manager.query(
      `SELECT coalesce(max(position) + 1, 0)::int AS next FROM passages WHERE document_id = $1`,
      [documentId],
    );
    return next;
  }

  /** Adds the document's passages from `firstPosition` on, in batches. */
  async insertPassages(
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
  passageTexts(documentId: number): Promise<IngestedPassage[]> {
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
  async lockNextToRecut(version: number): Promise<Document | undefined> {
    const [next]: { id: number }[] = await this.manager.query(
      `SELECT id FROM documents WHERE status = 'active' AND passages_cut < $1 ORDER BY id LIMIT 1
            FOR UPDATE SKIP LOCKED`,
      [version],
    );
    if (!next) return undefined;
    return this.manager.getRepository(Document).findOneByOrFail({ id: next.id });
  }

  /** Records the cutter that wrote the passages; not through the entity, so updated_at stays (a re-cut is no change). */
  async setPassagesCut(documentId: number, version: number): Promise<void> {
    await this.manager.query(`UPDATE documents SET passages_cut = $2 WHERE id = $1`, [documentId, version]);
  }

  /** A refresh that succeeded: the content's new length and its outcome, and the next refresh scheduled. */
  async recordRefresh(documentId: number, contentLength: number, outcome: DocumentRefreshOutcome): Promise<void> {
    await this.manager.query(
      `UPDATE documents SET content_length = $2, last_refreshed_at = $3, last_refresh = $4::jsonb,
                  next_refresh_at = now() + make_interval(hours => refresh_interval_hours), updated_at = now()
            WHERE id = $1`,
      [documentId, contentLength, outcome.finished_at, JSON.stringify(outcome)],
    );
  }

  /** A refresh that failed: its outcome, and the next refresh scheduled; the content stays as it was. */
  async recordRefreshFailure(documentId: number, outcome: DocumentRefreshOutcome): Promise<void> {
    await this.manager.query(
      `UPDATE documents SET
                  last_refresh = $2::jsonb,
                  next_refresh_at = now() + make_interval(hours => refresh_interval_hours), updated_at = now()
            WHERE id = $1`,
      [documentId, JSON.stringify(outcome)],
    );
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
                                 ORDER BY id LIMIT $2)`,
      [knowledgebaseId, batch],
    );
  }
}
