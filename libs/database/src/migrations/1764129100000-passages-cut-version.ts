import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Which version of the passage cutter wrote a document's passages (PASSAGE_CUT_VERSION in libs/extraction). The
 * documents there are now were cut by the first, inside sentences and with decoration; the worker's `recut-passages`
 * re-cuts them one at a time in the background, and the partial index finds the ones left without reading the rest.
 */
export class PassagesCutVersion1764129100000 implements MigrationInterface {
  name = 'PassagesCutVersion1764129100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE documents ADD COLUMN passages_cut smallint NOT NULL DEFAULT 1`);
    await queryRunner.query(
      `CREATE INDEX documents_to_recut ON documents (id) WHERE status = 'active' AND passages_cut < 2`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX documents_to_recut`);
    await queryRunner.query(`ALTER TABLE documents DROP COLUMN passages_cut`);
  }
}
