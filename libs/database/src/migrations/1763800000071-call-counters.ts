import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Exact call totals without counting, as for leads: per account, status, type, assistant, campaign and day of
 * creation (UTC), kept by triggers in the writing transaction. One filter (other than a partial phone number), or
 * only a date range, reads its total here; a partial number or a combination counts rows.
 *
 * Calls of one account are written concurrently by the runtime, so each counter is split in eight shards (by the
 * writing connection): concurrent writers rarely wait on the same counter row, and a read sums the shards.
 */
export class CallCounters1763800000071 implements MigrationInterface {
  name = 'CallCounters1763800000071';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE call_counts (
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        -- '', 's:<status>', 't:<type>', 'a:<assistant id>', 'c:<campaign id>', 'd:<YYYY-MM-DD>'
        bucket varchar(48) NOT NULL,
        shard smallint NOT NULL DEFAULT 0,
        total bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, bucket, shard)
      )`);
    await queryRunner.query(`
      CREATE FUNCTION call_counts_apply(item calls, delta integer) RETURNS void LANGUAGE sql AS $$
        INSERT INTO call_counts (user_id, bucket, shard, total)
        SELECT item.user_id, bucket, pg_backend_pid() % 8, delta FROM unnest(ARRAY[
          '', 's:' || item.status, 't:' || item.type,
          CASE WHEN item.assistant_id IS NULL THEN NULL ELSE 'a:' || item.assistant_id END,
          CASE WHEN item.campaign_id IS NULL THEN NULL ELSE 'c:' || item.campaign_id END,
          'd:' || to_char(item.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')]) AS bucket
        WHERE bucket IS NOT NULL
        ON CONFLICT (user_id, bucket, shard) DO UPDATE SET total = call_counts.total + EXCLUDED.total;
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION call_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN PERFORM call_counts_apply(OLD, -1); END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN PERFORM call_counts_apply(NEW, 1); END IF;
        RETURN NULL;
      END;
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER calls_count_insert_delete AFTER INSERT OR DELETE ON calls
        FOR EACH ROW EXECUTE FUNCTION call_counts_track()`);
    await queryRunner.query(`
      CREATE TRIGGER calls_count_update AFTER UPDATE OF status, type, assistant_id, campaign_id, user_id, created_at ON calls
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.type IS DISTINCT FROM NEW.type
          OR OLD.assistant_id IS DISTINCT FROM NEW.assistant_id OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id
          OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.created_at IS DISTINCT FROM NEW.created_at)
        EXECUTE FUNCTION call_counts_track()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER calls_count_update ON calls`);
    await queryRunner.query(`DROP TRIGGER calls_count_insert_delete ON calls`);
    await queryRunner.query(`DROP FUNCTION call_counts_track()`);
    await queryRunner.query(`DROP FUNCTION call_counts_apply(calls, integer)`);
    await queryRunner.query(`DROP TABLE call_counts`);
  }
}
