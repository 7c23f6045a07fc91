import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `call_event_conflict(seq)` fails the statement that calls it with a unique violation on `call_events_same_seq`,
 * the seq in its detail. The runtime's events are stored by one `INSERT ... ON CONFLICT (call_id, seq) DO UPDATE`
 * whose update runs only for a stored event with other content under the same seq, and calls this: the whole batch
 * is then undone, whether the other event was stored long before or by a request racing this one.
 */
export class CallEventConflicts1764131400000 implements MigrationInterface {
  name = 'CallEventConflicts1764131400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION call_event_conflict(seq integer) RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'call event % was already recorded with other content', seq
          USING ERRCODE = 'unique_violation', CONSTRAINT = 'call_events_same_seq', DETAIL = seq::text;
      END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION call_event_conflict(integer)`);
  }
}
