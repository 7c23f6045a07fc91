import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { PassageHit } from '@app/contracts';
import { queryPool } from './pool-query';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A passage still to embed with the current model, and whose tokens it spends. */
export interface PassageToEmbed {
  id: number;
  userId: number;
  content: string;
}

/** A knowledgebase's vectors of one model, as the search by meaning scans them: ids and one flat array. */
export interface KnowledgebaseVectors {
  ids: Int32Array;
  /** `ids.length` unit vectors of `dimensions` floats, one after another. */
  vectors: Float32Array;
  dimensions: number;
}

/** Stored as 32-bit floats, little-endian: 4 bytes a dimension. */
export function vectorToBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes;
}

/**
 * `passages.embedding`: each passage's vector of the embeddings model named in `embedding_model` (`model/dimensions`).
 * A passage is embedded once a model: what is written is never asked for again, so a job stopped anywhere resumes
 * with what is left.
 */
@Injectable()
export class PassageEmbeddingsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** The next `limit` passages of the document without a vector of `model`, in order. */
  async toEmbed(documentId: number, model: string, limit: number): Promise<PassageToEmbed[]> {
    const rows: { id: number; user_id: number; content: string }[] = await this.manager.query(
      `SELECT id, user_id, content FROM (
         SELECT id, user_id, content FROM passages WHERE document_id = $1 AND embedding IS NULL
         UNION ALL
         SELECT id, user_id, content FROM passages
          WHERE document_id = $1 AND embedding IS NOT NULL AND (embedding_model < $2 OR embedding_model > $2)
       ) passage ORDER BY id LIMIT $3`,
      [documentId, model, limit],
    );
    return rows.map((row) => ({ id: row.id, userId: row.user_id, content: row.content }));
  }

  /** Writes vectors of `model`; a passage deleted meanwhile (a refresh, a re-cut) is simply gone. */
  async write(model: string, vectors: { id: number; vector: Float32Array }[]): Promise<void> {
    if (vectors.length === 0) return;
    await this.manager.query(
      `UPDATE passages SET embedding = item.embedding, embedding_model = $1
         FROM unnest($2::int[], $3::bytea[]) AS item(id, embedding)
        WHERE passages.id = item.id`,
      [model, vectors.map((entry) => entry.id), vectors.map((entry) => vectorToBytes(entry.vector))],
    );
  }

  /** Documents with passages still to embed with `model` (new passages, or another model's), at most `limit`. */
  async documentsToEmbed(model: string, limit: number): Promise<number[]> {
    const rows: { document_id: number }[] = await this.manager.query(
      `SELECT DISTINCT document_id FROM (
         (SELECT document_id FROM passages WHERE embedding IS NULL LIMIT $2 * 50)
         UNION ALL
         (SELECT document_id FROM passages
           WHERE embedding IS NOT NULL AND (embedding_model < $1 OR embedding_model > $1) LIMIT $2 * 50)
       ) waiting
        JOIN documents document ON document.id = waiting.document_id AND document.status = 'active'
       LIMIT $2`,
      [model, limit],
    );
    return rows.map((row) => row.document_id);
  }

  /**
   * What says whether a knowledgebase's vectors of `model` changed: their count and the newest passage's id (a
   * passage added or deleted, or one embedded, changes either).
   */
  async version(ownerId: number, knowledgebaseId: number, model: string): Promise<string> {
    const [row] = await queryPool<{ count: number; newest: number | null }>(
      this.dataSource,
      `SELECT count(*)::int AS count, max(id) AS newest FROM passages
        WHERE knowledgebase_id = $1 AND user_id = $2 AND embedding_model = $3 AND embedding IS NOT NULL`,
      [knowledgebaseId, ownerId, model],
    );
    return `${row.count}:${row.newest ?? 0}`;
  }

  /** Every vector of `model` in the knowledgebase (their length is the model's). */
  async vectors(ownerId: number, knowledgebaseId: number, model: string): Promise<KnowledgebaseVectors> {
    const rows = await queryPool<{ id: number; embedding: Buffer }>(
      this.dataSource,
      `SELECT id, embedding FROM passages
        WHERE knowledgebase_id = $1 AND user_id = $2 AND embedding_model = $3 AND embedding IS NOT NULL`,
      [knowledgebaseId, ownerId, model],
    );
    const dimensions = rows.length > 0 ? rows[0].embedding.length / 4 : 0;
    const kept = rows.filter((row) => row.embedding.length === dimensions * 4);
    const ids = new Int32Array(kept.length);
    const vectors = new Float32Array(kept.length * dimensions);
    kept.forEach((row, index) => {
      ids[index] = row.id;
      for (let at = 0; at < dimensions; at++) vectors[index * dimensions + at] = row.embedding.readFloatLE(at * 4);
    });
    return { ids, vectors, dimensions };
  }

  /** The owner's passages of `ids` as a search answers them, the first sentence as the highlight. */
  async hits(ownerId: number, ids: number[]): Promise<PassageHit[]> {
    if (ids.length === 0) return [];
    return queryPool<PassageHit>(
      this.dataSource,
      `SELECT passage.id, passage.document_id, document.name AS document_name, passage.content, passage.source_url,
              0::float8 AS score, (regexp_split_to_array(passage.content, '(?<=[.!?])\\s+'))[1] AS highlight
         FROM passages passage JOIN documents document ON document.id = passage.document_id
        WHERE passage.id = ANY ($2::int[]) AND passage.user_id = $1`,
      [ownerId, ids],
    );
  }
}
