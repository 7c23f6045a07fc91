import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Each passage's vector from the model provider's embeddings model, for search by meaning: unit length, 32-bit
 * floats little-endian (4 bytes a dimension), and the model that made it (`model/dimensions`), so a changed model
 * re-embeds. Passages still to embed are found by the partial indexes: new ones (no vector) by their document, and
 * those of another model by a range on either side of the current one. A search asks whether a knowledgebase's
 * vectors changed (their count and newest id) of the last index alone, without reading the rows.
 */
export class PassageEmbeddings1764180000000 implements MigrationInterface {
  name = 'PassageEmbeddings1764180000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE passages ADD COLUMN embedding bytea, ADD COLUMN embedding_model text`);
    await queryRunner.query(`CREATE INDEX passages_to_embed ON passages (document_id) WHERE embedding IS NULL`);
    await queryRunner.query(
      `CREATE INDEX passages_embedding_model ON passages (embedding_model, document_id) WHERE embedding IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX passages_knowledgebase_vectors ON passages (knowledgebase_id, user_id, embedding_model, id)
        WHERE embedding IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX passages_knowledgebase_vectors`);
    await queryRunner.query(`DROP INDEX passages_embedding_model`);
    await queryRunner.query(`DROP INDEX passages_to_embed`);
    await queryRunner.query(`ALTER TABLE passages DROP COLUMN embedding, DROP COLUMN embedding_model`);
  }
}
