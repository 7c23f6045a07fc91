import { type MigrationInterface, type QueryRunner } from 'typeorm';

const BUCKETS_WITHOUT_SUCCESS = `ARRAY['', 's:' || status, 't:' || type, 'a:' || assistant_id, 'c:' || campaign_id,
                                  'd:' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')]`;

/**
 * Post-call analysis. Assistants get their plan (`analysis`, null: the defaults). Calls get the analysis (`analysis`,
 * null until the call ends or without a model provider), the run it belongs to (`analysis_run`: a re-run is a new
 * run, and only the current run's job writes), the grade's pass kept apart for the list's `success` filter
 * (`analysis_success`), the `call.analyzed` event of the current run and whether its delivery is owed, and when the
 * analysis last changed (for the sweep of lost jobs). Nullable columns, and constant defaults, rewrite nothing.
 *
 * The filter's exact totals come from the call counters like the others': a call counts in `x:true` or `x:false`
 * once graded. `call_count_buckets` gains the grade; the counters' trigger also follows a change of it; the
 * retention's purge counts what it removes with it. No call has a grade yet, so no counter needs filling.
 */
export class CallAnalysis1764140000000 implements MigrationInterface {
  name = 'CallAnalysis1764140000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE assistants ADD COLUMN analysis jsonb`);
    await queryRunner.query(`
      ALTER TABLE calls
        ADD COLUMN analysis jsonb,
        ADD COLUMN analysis_run integer NOT NULL DEFAULT 0,
        ADD COLUMN analysis_success boolean,
        ADD COLUMN analysis_event_id varchar(64),
        ADD COLUMN analysis_webhook_due boolean NOT NULL DEFAULT false,
        ADD COLUMN analysis_changed_at timestamptz`);
    await queryRunner.query(`
      CREATE FUNCTION call_count_buckets(status text, type text, assistant_id integer, campaign_id integer,
                                         created_at timestamptz, success boolean) RETURNS text[] LANGUAGE sql STABLE AS $$
        SELECT array_remove(${BUCKETS_WITHOUT_SUCCESS} || ('x:' || success), NULL)
      $$`);
    await this.countWith(queryRunner, 'item.analysis_success', 'gone.analysis_success', ', analysis_success');
    await queryRunner.query(`DROP FUNCTION call_count_buckets(text, text, integer, integer, timestamptz)`);
    await this.recreateUpdateTrigger(queryRunner, ', analysis_success');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION call_count_buckets(status text, type text, assistant_id integer, campaign_id integer,
                                         created_at timestamptz) RETURNS text[] LANGUAGE sql STABLE AS $$
        SELECT array_remove(${BUCKETS_WITHOUT_SUCCESS}, NULL)
      $$`);
    await this.recreateUpdateTrigger(queryRunner, '');
    await this.countWith(queryRunner, undefined, undefined, '');
    await queryRunner.query(`DROP FUNCTION call_count_buckets(text, text, integer, integer, timestamptz, boolean)`);
    await queryRunner.query(`DELETE FROM call_counts WHERE bucket LIKE 'x:%'`);
    await queryRunner.query(`
      ALTER TABLE calls
        DROP COLUMN analysis, DROP COLUMN analysis_run, DROP COLUMN analysis_success, DROP COLUMN analysis_event_id,
        DROP COLUMN analysis_webhook_due, DROP COLUMN analysis_changed_at`);
    await queryRunner.query(`ALTER TABLE assistants DROP COLUMN analysis`);
  }

  /** The counters' row function and the retention's purge, with the grade's bucket (`success`) or without. */
  private async countWith(
    queryRunner: QueryRunner,
    itemSuccess: string | undefined,
    goneSuccess: string | undefined,
    returning: string,
  ): Promise<void> {
    const item = itemSuccess ? `, ${itemSuccess}` : '';
    const gone = goneSuccess ? `, ${goneSuccess}` : '';
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION call_counts_apply(item calls, delta integer) RETURNS void LANGUAGE sql AS $$
        INSERT INTO call_counts (user_id, bucket, shard, total)
        SELECT item.user_id, bucket, pg_backend_pid() % 8, delta
          FROM unnest(call_count_buckets(item.status, item.type, item.assistant_id, item.campaign_id, item.created_at${item})) AS bucket
        ON CONFLICT (user_id, bucket, shard) DO UPDATE SET total = call_counts.total + EXCLUDED.total;
      $$`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION purge_calls_before(cutoff timestamptz, batch integer) RETURNS integer LANGUAGE plpgsql AS $$
      DECLARE
        removed integer;
      BEGIN
        PERFORM set_config('calls.purging', 'on', true);
        WITH gone AS (
          DELETE FROM calls WHERE id IN (
            SELECT id FROM calls WHERE created_at < cutoff ORDER BY created_at LIMIT batch FOR UPDATE SKIP LOCKED)
          RETURNING user_id, status, type, assistant_id, campaign_id, created_at${returning}
        ), counted AS (
          INSERT INTO call_counts (user_id, bucket, shard, total)
          SELECT gone.user_id, bucket, 8, -count(*)
            FROM gone, unnest(call_count_buckets(gone.status, gone.type, gone.assistant_id, gone.campaign_id,
                                                 gone.created_at${gone})) AS bucket
           GROUP BY gone.user_id, bucket
          ON CONFLICT (user_id, bucket, shard) DO UPDATE SET total = call_counts.total + EXCLUDED.total
        )
        SELECT count(*) INTO removed FROM gone;
        PERFORM set_config('calls.purging', 'off', true);
        RETURN removed;
      END;
      $$`);
  }

  private async recreateUpdateTrigger(queryRunner: QueryRunner, success: string): Promise<void> {
    await queryRunner.query(`DROP TRIGGER calls_count_update ON calls`);
    const changed = success ? ' OR OLD.analysis_success IS DISTINCT FROM NEW.analysis_success' : '';
    await queryRunner.query(`
      CREATE TRIGGER calls_count_update
        AFTER UPDATE OF status, type, assistant_id, campaign_id, user_id, created_at${success} ON calls
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.type IS DISTINCT FROM NEW.type
          OR OLD.assistant_id IS DISTINCT FROM NEW.assistant_id OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id
          OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.created_at IS DISTINCT FROM NEW.created_at${changed})
        EXECUTE FUNCTION call_counts_track()`);
  }
}
