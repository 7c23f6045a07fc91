import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `documents.embedding_refused_with`: the embeddings model that refused a document's passages for good (a 4xx other
 * than 408/429: too long, a content policy), so that the sweep stops queueing it every interval. It is cleared
 * with `embedded_with` whenever passages are added to the document, and a changed model tries again, as it would
 * for any document.
 */
export class EmbeddingRefused1764190000000 implements MigrationInterface {
  name = 'EmbeddingRefused1764190000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE documents ADD COLUMN embedding_refused_with text`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION passages_clear_embedded_with() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE documents SET embedded_with = NULL, embedding_refused_with = NULL
         WHERE id IN (SELECT DISTINCT document_id FROM new_rows)
           AND (embedded_with IS NOT NULL OR embedding_refused_with IS NOT NULL);
        RETURN NULL;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION passages_clear_embedded_with() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE documents SET embedded_with = NULL
         WHERE id IN (SELECT DISTINCT document_id FROM new_rows) AND embedded_with IS NOT NULL;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`ALTER TABLE documents DROP COLUMN embedding_refused_with`);
  }
}
