import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { replaceIndexConcurrently } from '../replace-index';

/**
 * The search's walk to common words takes a knowledgebase's passages in id order, so the same question answers the
 * same passages however the table is read (unordered, a scan started where another had got to answered others). Over
 * `id` itself that order is the primary key's too, and the planner took it for a knowledgebase holding much of the
 * table, reading the other knowledgebases' passages before its own (4,353 buffers where the walk's btree reads 1,614;
 * docs/benchmarks.md, section 9). Over `id::bigint`, an expression only this btree has, the order can only come from
 * it. The re-index's batches take the same order. Built concurrently, the old index dropped once the new one is valid.
 */
export class PassagesWalkById1764230000000 implements MigrationInterface {
  name = 'PassagesWalkById1764230000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'passages_knowledgebase_walk_by_id',
      'passages ((knowledgebase_id::bigint), (id::bigint))',
      'passages_knowledgebase_walk',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'passages_knowledgebase_walk',
      'passages ((knowledgebase_id::bigint), id)',
      'passages_knowledgebase_walk_by_id',
    );
  }
}
