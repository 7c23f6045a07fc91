import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The primary's WAL position after each account's last write, for read-your-writes with DATABASE_REPLICA_URLS: an
 * account's reads go to a replica only once it has replayed past it. Unlogged, since it is written after every write
 * request: it costs no WAL and no replay, and is read only on the primary. A crash of the primary empties it; until
 * the accounts write again, their reads are then held only to the replicas' lag bound.
 */
export class AccountWritePositions1764119250000 implements MigrationInterface {
  name = 'AccountWritePositions1764119250000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE UNLOGGED TABLE account_write_positions (user_id integer PRIMARY KEY, lsn pg_lsn NOT NULL)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE account_write_positions`);
  }
}
