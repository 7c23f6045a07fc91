import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { replaceIndexConcurrently } from '../replace-index';

/**
 * The call list's client number filter (a part of the number, `LIKE '%digits%'`) reads only the account's own
 * entries. pg_trgm's index keeps one posting list per trigram for every account together: at 20,000,000 calls a
 * six-digit part intersects lists ten times the account's, and leading that index with the account (btree_gin) is
 * slower still, as the scan then also reads the account's own entry of every call it has. Here each key is the
 * account and a hash of three characters in a row of the number (`account_number_trigrams`), so a part's keys
 * (every three characters in a row of it, at least three) name candidates of that account only; LIKE rechecks them,
 * so what matches is unchanged. Built concurrently (outside a transaction), so ingestion and lists go on meanwhile;
 * the old index is dropped only once the new one is valid.
 */
export class CallsClientNumberPerAccount1764121000000 implements MigrationInterface {
  name = 'CallsClientNumberPerAccount1764121000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    // GIN removes a number's repeated keys itself; a hash collision only adds a candidate LIKE then rejects.
    // PL/pgSQL keeps its compiled body for the session: an SQL function is planned again by every INSERT that
    // computes the key, which made a one-row insert about 90 µs slower (PL/pgSQL: about 25 µs).
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION account_number_trigrams(account integer, number text) RETURNS bigint[]
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
        DECLARE
          keys bigint[] := '{}';
        BEGIN
          FOR position IN 1 .. length(number) - 2 LOOP
            keys := keys || ((account::bigint << 32) | (hashtext(substr(number, position, 3))::bigint & 4294967295));
          END LOOP;
          RETURN keys;
        END
        $$`);
    await replaceIndexConcurrently(
      queryRunner,
      'calls_account_client_number',
      'calls USING gin (account_number_trigrams(user_id, client_phone_number))',
      'calls_client_phone_trgm',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'calls_client_phone_trgm',
      'calls USING gin (client_phone_number gin_trgm_ops)',
      'calls_account_client_number',
    );
    await queryRunner.query(`DROP FUNCTION IF EXISTS account_number_trigrams(integer, text)`);
  }
}
