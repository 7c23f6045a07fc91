import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { SEEDED_LANGUAGES } from './seeded-languages';

export class Languages1763800000001 implements MigrationInterface {
  name = 'Languages1763800000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE languages (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name varchar(100) NOT NULL,
        iso_2 char(2) NOT NULL
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX languages_iso_2_unique ON languages (iso_2)`);
    const values = SEEDED_LANGUAGES.map((_, index) => `($${index * 2 + 1}, $${index * 2 + 2})`).join(', ');
    await queryRunner.query(`INSERT INTO languages (name, iso_2) VALUES ${values}`, SEEDED_LANGUAGES.flat());
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE languages`);
  }
}
