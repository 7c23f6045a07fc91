import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The statements every call write and every webhook delivery runs, kept planned on the connection. PostgreSQL plans
 * an unnamed statement anew on each run, and a SQL function's statement anew in each statement that calls it; the
 * service sends only unnamed statements (PgBouncer in transaction mode keeps no named one for a client). PL/pgSQL
 * keeps its statements' plans for the server connection's life, whichever client it serves, so the statements whose
 * planning cost more than their work move into PL/pgSQL functions (docs/benchmarks.md, section 7, measured with
 * pgbench on one connection each):
 *
 * - the call and lead counters' upserts, run by their triggers for every row written: 0.24-0.31 ms of a call's
 *   insert, 0.07 ms planned once;
 * - `call_before_write`, the one read a call write decides on (`CallWritesRepository.readBeforeWriteByExternalId`):
 *   six tables joined, planned in 0.18-0.26 ms and run in 0.03; 3 times the reads a second;
 * - `call_webhook_lead` and `call_webhook_events`, the lead and the turns a webhook body names, read within the
 *   delivery's one statement (`CallDeliveriesRepository`): its planning went from 0.10 to 0.24 ms with them inline.
 *
 * The statements are those the repositories ran before, so every answer is the same. A change to one is a migration
 * that replaces its function.
 */
export class StatementsPlannedOnce1764210000000 implements MigrationInterface {
  name = 'StatementsPlannedOnce1764210000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await defineCounters(queryRunner, 'plpgsql');
    await queryRunner.query(`
      CREATE FUNCTION call_before_write(wanted_external_id varchar, wanted_assistant integer, wanted_campaign integer,
                                        wanted_lead integer)
      RETURNS TABLE (id integer, user_id integer, name varchar, webhook_url varchar, is_webhook_active boolean,
                     record boolean, campaign_found boolean, campaign_name varchar, lead_found boolean,
                     call_user_id integer, call_assistant_id integer, call_campaign_id integer, call_lead_id integer,
                     call_status varchar, call_assistant_phone_number varchar, call_version text,
                     account_campaigns_waiting boolean)
      LANGUAGE plpgsql STABLE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        SELECT a.id, a.user_id, a.name, a.webhook_url, a.is_webhook_active, a.record,
               campaign.id IS NOT NULL, campaign.name,
               lead.id IS NOT NULL,
               call.user_id, call.assistant_id, call.campaign_id, call.lead_id, call.status,
               call.assistant_phone_number, call.xmin::text,
               slots.campaigns_waiting
          FROM (SELECT wanted_external_id AS external_id) wanted
          LEFT JOIN calls call ON call.external_id = wanted.external_id
          LEFT JOIN account_call_slots slots ON slots.user_id = call.user_id
          LEFT JOIN assistants a ON a.id = COALESCE(wanted_assistant, call.assistant_id)
          LEFT JOIN campaigns campaign
                 ON campaign.id = wanted_campaign AND campaign.user_id = COALESCE(a.user_id, call.user_id)
          LEFT JOIN leads lead ON lead.id = wanted_lead AND lead.user_id = COALESCE(a.user_id, call.user_id);
      END;
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION call_webhook_lead(lead_id integer) RETURNS json LANGUAGE plpgsql STABLE STRICT AS $$
      BEGIN
        RETURN (SELECT json_build_object('id', l.id, 'phone_number', l.phone_number, 'variables', l.variables,
                                         'status', l.status, 'campaign_id', p.id, 'campaign_name', p.name)
                  FROM leads l JOIN campaigns p ON p.id = l.campaign_id WHERE l.id = call_webhook_lead.lead_id);
      END;
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION call_webhook_events(call_id integer) RETURNS json LANGUAGE plpgsql STABLE STRICT AS $$
      BEGIN
        RETURN COALESCE((SELECT json_agg(json_build_object('type', e.type, 'seq', e.seq,
                                                           'at', date_trunc('milliseconds', e.at), 'data', e.data)
                                         ORDER BY e.at, e.seq NULLS LAST, e.id)
                           FROM call_events e
                          WHERE e.call_id = call_webhook_events.call_id AND e.type IN ('transcript', 'tool_call')),
                        '[]');
      END;
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION call_webhook_events(integer)`);
    await queryRunner.query(`DROP FUNCTION call_webhook_lead(integer)`);
    await queryRunner.query(`DROP FUNCTION call_before_write(varchar, integer, integer, integer)`);
    await defineCounters(queryRunner, 'sql');
  }
}

/** The counters' upserts as their migrations wrote them (`sql`), or kept planned (`plpgsql`). */
async function defineCounters(queryRunner: QueryRunner, language: 'plpgsql' | 'sql'): Promise<void> {
  const body = (statement: string) => (language === 'plpgsql' ? `BEGIN ${statement}; END;` : statement);
  await queryRunner.query(`
    CREATE OR REPLACE FUNCTION call_counts_apply(item calls, delta integer) RETURNS void LANGUAGE ${language} AS $$
    ${body(`
      INSERT INTO call_counts (user_id, bucket, shard, total)
      SELECT item.user_id, bucket, pg_backend_pid() % 8, delta
        FROM unnest(call_count_buckets(item.status, item.type, item.assistant_id, item.campaign_id, item.created_at,
                                       item.analysis_success)) AS bucket
      ON CONFLICT (user_id, bucket, shard) DO UPDATE SET total = call_counts.total + EXCLUDED.total`)}
    $$`);
  await queryRunner.query(`
    CREATE OR REPLACE FUNCTION lead_counts_apply(account integer, status varchar, campaign integer, created timestamptz,
                                                 delta integer)
    RETURNS void LANGUAGE ${language} AS $$
    ${body(`
      INSERT INTO lead_counts (user_id, bucket, total)
      VALUES (account, '', delta), (account, status, delta), (account, '#' || campaign, delta),
             (account, 'd' || to_char(created AT TIME ZONE 'UTC', 'YYYY-MM-DD'), delta)
      ON CONFLICT (user_id, bucket) DO UPDATE SET total = lead_counts.total + EXCLUDED.total`)}
    $$`);
}
