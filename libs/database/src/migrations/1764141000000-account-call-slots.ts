import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * How many calls each account has in progress (`initiated`, `ringing`, `in-progress`), and the most it may have
 * (null: the deployment's `ACCOUNT_MAX_CONCURRENT_CALLS`). One row per account, created with the account and kept
 * by triggers in the transaction that writes the call, so the count is exact on any number of processes: a call
 * written open adds one, a call that ends (its final write, the reaper) or is deleted while open takes it back.
 *
 * The row is also the account's one point of order for new calls: a statement that creates a call locks it
 * (`FOR UPDATE`) and creates the call only while `in_progress` is below the cap. A writer that waited for the lock
 * reads the row as the previous holder committed it (PostgreSQL re-checks a locked row's condition on its newest
 * version), so no two writers ever both take the last slot, and no extra round trip is needed.
 *
 * The triggers are named to fire before the call counters' (`calls_count_*`, alphabetical order): every writer then
 * takes an account's slot row before that account's counter rows, as the dialer's claim does, and never the reverse.
 */
export class AccountCallSlots1764141000000 implements MigrationInterface {
  name = 'AccountCallSlots1764141000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE account_call_slots (
        user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        in_progress integer NOT NULL DEFAULT 0,
        max_concurrent_calls integer CHECK (max_concurrent_calls >= 0)
      )`);
    await queryRunner.query(`
      CREATE FUNCTION account_call_slots_create() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO account_call_slots (user_id) VALUES (NEW.id) ON CONFLICT (user_id) DO NOTHING;
        RETURN NULL;
      END;
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER users_account_call_slots AFTER INSERT ON users
        FOR EACH ROW EXECUTE FUNCTION account_call_slots_create()`);
    await queryRunner.query(`
      CREATE FUNCTION account_call_slots_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.status IN ('initiated', 'ringing', 'in-progress') THEN
          UPDATE account_call_slots SET in_progress = in_progress - 1 WHERE user_id = OLD.user_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN ('initiated', 'ringing', 'in-progress') THEN
          UPDATE account_call_slots SET in_progress = in_progress + 1 WHERE user_id = NEW.user_id;
        END IF;
        RETURN NULL;
      END;
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER calls_account_slots_insert_delete AFTER INSERT OR DELETE ON calls
        FOR EACH ROW EXECUTE FUNCTION account_call_slots_track()`);
    await queryRunner.query(`
      CREATE TRIGGER calls_account_slots_update AFTER UPDATE OF status, user_id ON calls
        FOR EACH ROW WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id
          OR (OLD.status IN ('initiated', 'ringing', 'in-progress')) <> (NEW.status IN ('initiated', 'ringing', 'in-progress')))
        EXECUTE FUNCTION account_call_slots_track()`);
    // In the transaction that created the triggers: their lock holds call writes until the count commits.
    await queryRunner.query(`
      INSERT INTO account_call_slots (user_id, in_progress)
      SELECT u.id, (SELECT count(*) FROM calls c
                     WHERE c.user_id = u.id AND c.status IN ('initiated', 'ringing', 'in-progress'))
        FROM users u`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER calls_account_slots_update ON calls`);
    await queryRunner.query(`DROP TRIGGER calls_account_slots_insert_delete ON calls`);
    await queryRunner.query(`DROP FUNCTION account_call_slots_track()`);
    await queryRunner.query(`DROP TRIGGER users_account_call_slots ON users`);
    await queryRunner.query(`DROP FUNCTION account_call_slots_create()`);
    await queryRunner.query(`DROP TABLE account_call_slots`);
  }
}
