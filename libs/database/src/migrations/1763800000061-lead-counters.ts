import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Exact lead totals without counting: per account, per account and status, per campaign and per day of creation
 * (UTC), kept by triggers in the same transaction as every insert, delete and change, so they are exact whatever
 * runs concurrently. A list with no filter, one status or campaign filter, or only a date range reads its total
 * here (one row, or one row a day); a phone-number filter or a combination counts rows.
 */
export class LeadCounters1763800000061 implements MigrationInterface {
  name = 'LeadCounters1763800000061';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE lead_counts (
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        -- '' for the account's total, a status for that status, '#<campaign id>' for a campaign,
        -- 'd<YYYY-MM-DD>' for the leads created that day (UTC).
        bucket varchar(40) NOT NULL,
        total bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, bucket)
      )`);
    await queryRunner.query(`
      CREATE FUNCTION lead_counts_apply(account integer, status varchar, campaign integer, created timestamptz, delta integer)
      RETURNS void LANGUAGE sql AS $$
        INSERT INTO lead_counts (user_id, bucket, total)
        VALUES (account, '', delta), (account, status, delta), (account, '#' || campaign, delta),
               (account, 'd' || to_char(created AT TIME ZONE 'UTC', 'YYYY-MM-DD'), delta)
        ON CONFLICT (user_id, bucket) DO UPDATE SET total = lead_counts.total + EXCLUDED.total;
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION lead_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          PERFORM lead_counts_apply(OLD.user_id, OLD.status, OLD.campaign_id, OLD.created_at, -1);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          PERFORM lead_counts_apply(NEW.user_id, NEW.status, NEW.campaign_id, NEW.created_at, 1);
        END IF;
        RETURN NULL;
      END;
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER leads_count_insert_delete AFTER INSERT OR DELETE ON leads
        FOR EACH ROW EXECUTE FUNCTION lead_counts_track()`);
    await queryRunner.query(`
      CREATE TRIGGER leads_count_update AFTER UPDATE OF status, campaign_id, user_id, created_at ON leads
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id
                           OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.created_at IS DISTINCT FROM NEW.created_at)
        EXECUTE FUNCTION lead_counts_track()`);
    // Leads that exist already are counted once.
    await queryRunner.query(`
      INSERT INTO lead_counts (user_id, bucket, total)
      SELECT user_id, '', count(*) FROM leads GROUP BY user_id
      UNION ALL SELECT user_id, status, count(*) FROM leads GROUP BY user_id, status
      UNION ALL SELECT user_id, '#' || campaign_id, count(*) FROM leads GROUP BY user_id, campaign_id
      UNION ALL SELECT user_id, 'd' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), count(*) FROM leads
                GROUP BY 1, 2`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER leads_count_update ON leads`);
    await queryRunner.query(`DROP TRIGGER leads_count_insert_delete ON leads`);
    await queryRunner.query(`DROP FUNCTION lead_counts_track()`);
    await queryRunner.query(`DROP FUNCTION lead_counts_apply(integer, varchar, integer, timestamptz, integer)`);
    await queryRunner.query(`DROP TABLE lead_counts`);
  }
}
