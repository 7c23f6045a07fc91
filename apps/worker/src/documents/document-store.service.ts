import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Document, DocumentFile, DocumentPage, DocumentPageStatus, Passage } from '@app/database';

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
}

export interface IngestionResult {
  passages: IngestedPassage[];
  pages: IngestedPage[];
  contentLength: number;
}

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

  async fileContent(documentId: number): Promise<Buffer | null> {
    const file = await this.dataSource.getRepository(DocumentFile).findOne({ where: { documentId } });
    return file?.content ?? null;
  }

  /** Stores passages and pages, marks the document active and releases its uploaded file. */
  async complete(documentId: number, result: IngestionResult): Promise<boolean> {
    return this.lockedUpdate(documentId, async (manager, document) => {
      await this.replacePages(manager, documentId, result.pages);
      await manager.delete(Passage, { documentId });
      const rows = result.passages.map((passage, position) => ({
        userId: document.userId,
        knowledgebaseId: document.knowledgebaseId,
        documentId,
        position,
        content: passage.content,
        sourceUrl: passage.sourceUrl,
      }));
      for (let start = 0; start < rows.length; start += INSERT_BATCH) {
        await manager.insert(Passage, rows.slice(start, start + INSERT_BATCH));
      }
      await manager.update(
        Document,
        { id: documentId },
        {
          status: 'active',
          errorMessage: null,
          contentLength: result.contentLength,
        },
      );
      await manager.delete(DocumentFile, { documentId });
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
    work: (manager: EntityManager, document: Document) => Promise<void>,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const document = await manager
        .getRepository(Document)
        .createQueryBuilder('document')
        .setLock('pessimistic_write')
        .where('document.id = :documentId', { documentId })
        .getOne();
      if (!document || document.status !== 'processing') return false;
      await work(manager, document);
      return true;
    });
  }
}
