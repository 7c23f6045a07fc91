import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Each passage's vector from the model provider's embeddings model, for search by meaning: unit length, 32-bit
 * floats little-endian (4 bytes a dimension), and the model that made it (`model/dimensions`), so a changed model
 * re-embeds. A table of its own: writing a vector into the passage's row would rewrite the row and its full-text
 * index entries, and fire the vocabulary's triggers, for nothing. `documents.embedded_with` is the model a document's
 * passages all have a vector of (null: some have none), cleared whenever passages are added to it, so the sweep
 * reads documents, not passages. A search asks whether a knowledgebase's vectors changed (their count and newest
 * passage) of the index alone.
 */
export class PassageEmbeddings1764180000000 implements MigrationInterface {
  name = 'PassageEmbeddings1764180000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE passage_embeddings (
        passage_id integer PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE,
        user_id integer NOT NULL,
        knowledgebase_id integer NOT NULL,
        model text NOT NULL,
        embedding bytea NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX passage_embeddings_knowledgebase ON passage_embeddings (knowledgebase_id, user_id, model, passage_id)`,
    );
    await queryRunner.query(`ALTER TABLE documents ADD COLUMN embedded_with text`);
    await queryRunner.query(
      `CREATE INDEX documents_embedded_with ON documents (embedded_with) WHERE status = 'active'`,
    );
    await queryRunner.query(`
      CREATE FUNCTION passages_clear_embedded_with() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE documents SET embedded_with = NULL
         WHERE id IN (SELECT DISTINCT document_id FROM new_rows) AND embedded_with IS NOT NULL;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER passages_clear_embedded_with AFTER INSERT ON passages
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION passages_clear_embedded_with()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER passages_clear_embedded_with ON passages`);
    await queryRunner.query(`DROP FUNCTION passages_clear_embedded_with()`);
    await queryRunner.query(`DROP INDEX documents_embedded_with`);
    await queryRunner.query(`ALTER TABLE documents DROP COLUMN embedded_with`);
    await queryRunner.query(`DROP TABLE passage_embeddings`);
  }
}
