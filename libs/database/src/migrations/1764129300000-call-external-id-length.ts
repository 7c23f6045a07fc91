import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A call's external id is its room's name at the voice provider, and LiveKit takes room names up to 256 bytes
 * (`limit.max_room_name_length`, 256 by default in livekit-server's config): 128 refused the longer names an inbound
 * dispatch rule can make (its prefix, the caller's number and a random suffix). Widening a varchar is a change of
 * the catalogue only: no row or index is rewritten.
 */
export class CallExternalIdLength1764129300000 implements MigrationInterface {
  name = 'CallExternalIdLength1764129300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE calls ALTER COLUMN external_id TYPE varchar(256)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Refused (and nothing changed) while a call holds a longer id.
    await queryRunner.query(`ALTER TABLE calls ALTER COLUMN external_id TYPE varchar(128)`);
  }
}
