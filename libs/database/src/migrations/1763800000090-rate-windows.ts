import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class RateWindows1763800000090 implements MigrationInterface {
  name = 'RateWindows1763800000090';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Rate-limit and login-throttle windows when the queues (and so these counters) are on Postgres. Unlogged:
    // counts a crash may lose, like Redis's, in exchange for writes that skip the WAL.
    await queryRunner.query(`
      CREATE UNLOGGED TABLE rate_windows (
        key text PRIMARY KEY,
        count integer NOT NULL,
        ends_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX rate_windows_ends_at ON rate_windows (ends_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE rate_windows`);
  }
}
