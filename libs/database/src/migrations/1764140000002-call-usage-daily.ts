import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An account's calls and their seconds per UTC day of creation, for `GET /user/usage`: a row per account, day and
 * shard, kept by triggers in the writing transaction (a call's insert counts it; a change of its duration adds the
 * difference), so a year of usage is at most 366 × 9 rows of one index range, however many calls there are. Usage is
 * what was used: deleting a call (by its owner, or the retention) leaves it counted, as the model's tokens stay spent.
 * As for `call_counts`, concurrent writers add to one of eight shards (by their connection).
 *
 * The calls already stored are counted into a shard of their own (8), in the transaction that creates the trigger:
 * the trigger's lock holds call writes (not reads) until the count commits, so every call is counted once, by the
 * trigger or by the count. At 1,000,000 calls the count took 1.9 s on a loaded machine (docs/benchmarks.md, 16).
 */
export class CallUsageDaily1764140000002 implements MigrationInterface {
  name = 'CallUsageDaily1764140000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE call_usage_daily (
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        day date NOT NULL,
        shard smallint NOT NULL,
        calls integer NOT NULL DEFAULT 0,
        seconds bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, day, shard)
      )`);
    await queryRunner.query(`
      CREATE FUNCTION call_usage_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO call_usage_daily AS usage (user_id, day, shard, calls, seconds)
        VALUES (NEW.user_id, (NEW.created_at AT TIME ZONE 'UTC')::date, pg_backend_pid() % 8,
                CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE 0 END,
                NEW.duration - CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.duration END)
        ON CONFLICT (user_id, day, shard)
          DO UPDATE SET calls = usage.calls + EXCLUDED.calls, seconds = usage.seconds + EXCLUDED.seconds;
        RETURN NULL;
      END;
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER calls_usage_insert AFTER INSERT ON calls FOR EACH ROW EXECUTE FUNCTION call_usage_track()`);
    await queryRunner.query(`
      CREATE TRIGGER calls_usage_duration AFTER UPDATE OF duration ON calls
        FOR EACH ROW WHEN (OLD.duration IS DISTINCT FROM NEW.duration) EXECUTE FUNCTION call_usage_track()`);
    await queryRunner.query(`
      INSERT INTO call_usage_daily (user_id, day, shard, calls, seconds)
      SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, 8, count(*), sum(duration)
        FROM calls GROUP BY 1, 2`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER calls_usage_duration ON calls`);
    await queryRunner.query(`DROP TRIGGER calls_usage_insert ON calls`);
    await queryRunner.query(`DROP FUNCTION call_usage_track()`);
    await queryRunner.query(`DROP TABLE call_usage_daily`);
  }
}
