import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { replaceIndexConcurrently } from '../replace-index';

/**
 * Wherever the planner takes `knowledgebase_id = $2` for a few rows (a plan made once for any knowledgebase, or a
 * knowledgebase outside the most common values of a large table's statistics), a plain btree over the column won
 * the search's seeds over the full-text index: each seed then read the knowledgebase's every passage and tested its
 * vector (99,981 of 100,000 thrown away for one rare word, 70 ms instead of 3; at a million passages, seconds). The
 * btree the walk of common words needs is now over an expression the seeds never write, so they can only be answered
 * by the full-text index, which leads with the knowledgebase; `id` follows so that a batch over one knowledgebase in
 * id order (the re-index) reads it in order. Deleting a knowledgebase (the foreign key's cascade) finds its passages
 * through the full-text index. Built concurrently, the old index dropped once the new one is valid.
 */
export class PassagesWalkIndex1764124000000 implements MigrationInterface {
  name = 'PassagesWalkIndex1764124000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'passages_knowledgebase_walk',
      'passages ((knowledgebase_id::bigint), id)',
      'passages_knowledgebase_id',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'passages_knowledgebase_id',
      'passages (knowledgebase_id)',
      'passages_knowledgebase_walk',
    );
  }
}
