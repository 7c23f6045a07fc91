import { type MigrationInterface, type QueryRunner } from 'typeorm';

const COUNT_CHANGES = `IF TG_OP IN ('DELETE', 'UPDATE') THEN PERFORM call_counts_apply(OLD, -1); END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN PERFORM call_counts_apply(NEW, 1); END IF;
        RETURN NULL;`;

/**
 * CALL_RETENTION_DAYS removes calls a batch at a time through `purge_calls_before`, which counts the removed calls
 * itself, once a batch, into a counter shard of its own (8; writers use 0-7). Through the row trigger each removed
 * call would update six counter rows and hold the writers' shard rows of its account until the batch commits, so
 * ingestion and the lists' totals of that account would wait on the purge. While `calls.purging` is on (inside
 * that function only) the trigger leaves deletes to it. The buckets a call counts in are named once, in
 * `call_count_buckets`, for the trigger and the purge alike.
 */
export class PurgedCallCounts1764119260000 implements MigrationInterface {
  name = 'PurgedCallCounts1764119260000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION call_count_buckets(status text, type text, assistant_id integer, campaign_id integer,
                                         created_at timestamptz) RETURNS text[] LANGUAGE sql STABLE AS $$
        SELECT array_remove(ARRAY['', 's:' || status, 't:' || type, 'a:' || assistant_id, 'c:' || campaign_id,
                                  'd:' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')], NULL)
      $$`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION call_counts_apply(item calls, delta integer) RETURNS void LANGUAGE sql AS $$
        INSERT INTO call_counts (user_id, bucket, shard, total)
        SELECT item.user_id, bucket, pg_backend_pid() % 8, delta
          FROM unnest(call_count_buckets(item.status, item.type, item.assistant_id, item.campaign_id, item.created_at)) AS bucket
        ON CONFLICT (user_id, bucket, shard) DO UPDATE SET total = call_counts.total + EXCLUDED.total;
      $$`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION call_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('calls.purging', true) = 'on' THEN RETURN NULL; END IF;
        ${COUNT_CHANGES}
      END;
      $$`);
    // Oldest first through calls_created_at; rows another transaction holds (a write in flight) wait for a later run.
    await queryRunner.query(`
      CREATE FUNCTION purge_calls_before(cutoff timestamptz, batch integer) RETURNS integer LANGUAGE plpgsql AS $$
      DECLARE
        removed integer;
      BEGIN
        PERFORM set_config('calls.purging', 'on', true);
        WITH gone AS (
          DELETE FROM calls WHERE id IN (
            SELECT id FROM calls WHERE created_at < cutoff ORDER BY created_at LIMIT batch FOR UPDATE SKIP LOCKED)
          RETURNING user_id, status, type, assistant_id, campaign_id, created_at
        ), counted AS (
          INSERT INTO call_counts (user_id, bucket, shard, total)
          SELECT gone.user_id, bucket, 8, -count(*)
            FROM gone, unnest(call_count_buckets(gone.status, gone.type, gone.assistant_id, gone.campaign_id,
                                                 gone.created_at)) AS bucket
           GROUP BY gone.user_id, bucket
          ON CONFLICT (user_id, bucket, shard) DO UPDATE SET total = call_counts.total + EXCLUDED.total
        )
        SELECT count(*) INTO removed FROM gone;
        PERFORM set_config('calls.purging', 'off', true);
        RETURN removed;
      END;
      $$`);
  }

  /** Deletes count through the trigger again; `call_count_buckets` stays, naming the buckets as before. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION purge_calls_before(timestamptz, integer)`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION call_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${COUNT_CHANGES}
      END;
      $$`);
  }
}
