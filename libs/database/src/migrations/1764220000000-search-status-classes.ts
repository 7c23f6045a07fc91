import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An HTTP status code relates to its class in every search language, and without one: a question about a `503`
 * finds the passage that says what happens on a `5xx`. The class holds the code, so it counts more than a synonym
 * (0.5) or a derivation (0.6), and less than the code as written, which still ranks first. The weight is written
 * here, not read from wordnet-relations.ts, so that this migration means the same whatever later changes there.
 */
export class SearchStatusClasses1764220000000 implements MigrationInterface {
  name = 'SearchStatusClasses1764220000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      INSERT INTO search_related_lexemes (search_config, lexeme, related, weight)
      SELECT config.search_config, code::text, (code / 100)::text || 'xx', 0.8
        FROM (SELECT search_config FROM languages WHERE search_config IS NOT NULL UNION SELECT 'kb_simple') config,
             generate_series(100, 599) code
      ON CONFLICT DO NOTHING`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DELETE FROM search_related_lexemes WHERE lexeme ~ '^[1-5][0-9][0-9]$' AND related ~ '^[1-5]xx$'`,
    );
  }
}
