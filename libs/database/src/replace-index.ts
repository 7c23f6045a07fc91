import { type QueryRunner } from 'typeorm';

/**
 * Builds the index `name` (`definition`: what follows `ON`) concurrently, then drops `replaced`, so writes and reads
 * go on meanwhile and the old index serves until the new one is valid. An invalid index of the same name, left by a
 * build interrupted earlier, is dropped first. Runs outside a transaction (`transaction = false` on the migration).
 */
export async function replaceIndexConcurrently(
  queryRunner: QueryRunner,
  name: string,
  definition: string,
  replaced: string,
): Promise<void> {
  await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  await queryRunner.query(`CREATE INDEX CONCURRENTLY ${name} ON ${definition}`);
  await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${replaced}`);
}
