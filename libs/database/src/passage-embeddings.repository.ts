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
 * `passage_embeddings`: each passage's vector of the embeddings model named in `model` (`model/dimensions`).
 * A passage is embedded once a model: what is written is never asked for again, so a job stopped anywhere resumes
 * with what is left. A passage the model refused for what it holds has an empty `embedding`, so it is not asked for
 * again either, and no scan reads it as a vector.
 */
@Injectable()
export class PassageEmbeddingsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** The next `limit` passages of the document without a vector of `model`, in order. */
  async toEmbed(documentId: number, model: string, limit: number): Promise<PassageToEmbed[]> {
    const rows: { id: number; user_id: number; content: string }[] = await this.manager.query(
      `SELECT passage.id, passage.user_id, passage.content FROM passages passage
        WHERE passage.document_id = $1
          AND NOT EXISTS (SELECT 1 FROM passage_embeddings vector
                           WHERE vector.passage_id = passage.id AND vector.model = $2)
        ORDER BY passage.id LIMIT $3`,
      [documentId, model, limit],
    );
    return rows.map((row) => ({ id: row.id, userId: row.user_id, content: row.content }));
  }

  /** Writes vectors of `model` (replacing another model's); a passage deleted meanwhile is simply gone. */
  async write(model: string, vectors: { id: number; vector: Float32Array }[]): Promise<void> {
    if (vectors.length === 0) return;
    await this.manager.query(
      `INSERT INTO passage_embeddings (passage_id, user_id, knowledgebase_id, model, embedding)
       SELECT passage.id, passage.user_id, passage.knowledgebase_id, $1, item.embedding
         FROM unnest($2::int[], $3::bytea[]) AS item(id, embedding) JOIN passages passage ON passage.id = item.id
        ORDER BY passage.id
       ON CONFLICT (passage_id) DO UPDATE SET model = excluded.model, embedding = excluded.embedding`,
      [model, vectors.map((entry) => entry.id), vectors.map((entry) => vectorToBytes(entry.vector))],
    );
  }

  /** Records that `model` refused these passages for what they hold: none is asked for again with that model. */
  async writeRefused(model: string, ids: number[]): Promise<void> {
    await this.write(
      model,
      ids.map((id) => ({ id, vector: new Float32Array(0) })),
    );
  }

  /** Records that every passage of the document has a vector of `model`, unless passages came meanwhile. */
  async markEmbedded(documentId: number, model: string): Promise<void> {
    await this.manager.query(
      `UPDATE documents document SET embedded_with = $2
        WHERE document.id = $1
          AND NOT EXISTS (SELECT 1 FROM passages passage WHERE passage.document_id = $1
                            AND NOT EXISTS (SELECT 1 FROM passage_embeddings vector
                                             WHERE vector.passage_id = passage.id AND vector.model = $2))`,
      [documentId, model],
    );
  }

  /** Records that `model` refused the document's requests for good, so that the sweep leaves it until they change. */
  async markRefused(documentId: number, model: string): Promise<void> {
    await this.manager.query(`UPDATE documents SET embedding_refused_with = $2 WHERE id = $1`, [documentId, model]);
  }

  /**
   * Active documents whose passages are not all embedded with `model` (new ones, or another model's), at most
   * `limit`; not those `model` refused for good.
   */
  async documentsToEmbed(model: string, limit: number): Promise<number[]> {
    const rows: { id: number }[] = await this.manager.query(
      `SELECT id FROM documents
        WHERE status = 'active' AND (embedded_with IS NULL OR embedded_with < $1 OR embedded_with > $1)
          AND embedding_refused_with IS DISTINCT FROM $1
        ORDER BY id LIMIT $2`,
      [model, limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * What says whether a knowledgebase's vectors of `model` changed: their count and the newest passage's id (a
   * passage added or deleted, or one embedded, changes either), read from the index alone, and counted no further
   * than `atMost`: a count past it says only that the knowledgebase is larger (its newest id is then not read), so a
   * knowledgebase of a million passages costs as little as one of `atMost`.
   */
  async version(
    ownerId: number,
    knowledgebaseId: number,
    model: string,
    atMost: number,
  ): Promise<{ count: number; newest: number }> {
    const [row] = await queryPool<{ count: number; newest: number | null }>(
      this.dataSource,
      `SELECT count(*)::int AS count, max(passage_id) AS newest FROM (
         SELECT passage_id FROM passage_embeddings
          WHERE knowledgebase_id = $1 AND user_id = $2 AND model = $3 LIMIT $4) counted`,
      [knowledgebaseId, ownerId, model, atMost + 1],
    );
    return { count: row.count, newest: row.newest ?? 0 };
  }

  /** Every vector of `model` in the knowledgebase (their length is the model's). */
  async vectors(ownerId: number, knowledgebaseId: number, model: string): Promise<KnowledgebaseVectors> {
    const rows = await queryPool<{ id: number; embedding: Buffer }>(
      this.dataSource,
      `SELECT passage_id AS id, embedding FROM passage_embeddings
        WHERE knowledgebase_id = $1 AND user_id = $2 AND model = $3 AND octet_length(embedding) > 0`,
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
