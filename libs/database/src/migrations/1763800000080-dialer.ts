import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Dialer1763800000080 implements MigrationInterface {
  name = 'Dialer1763800000080';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A call the service places itself is its own dial attempt: `pending` once claimed, `dialing` while a worker
    // asks the provider (since `dial_started_at`, so another worker can take it over when that one died), then
    // `dialed` or `failed`. Calls the runtime reports on its own (inbound, web) have no dial state.
    await queryRunner.query(`
      ALTER TABLE calls
        ADD COLUMN dial_state varchar(16) CHECK (dial_state IN ('pending', 'dialing', 'dialed', 'failed')),
        ADD COLUMN dial_started_at timestamptz,
        ADD COLUMN phone_number_id integer REFERENCES phone_numbers (id) ON DELETE SET NULL,
        ADD COLUMN secondary_contact_id integer REFERENCES lead_secondary_contacts (id) ON DELETE SET NULL`);
    // The parallel limit counts a campaign's calls in flight; recovery looks for dials nobody settled.
    await queryRunner.query(
      `CREATE INDEX calls_campaign_in_flight ON calls (campaign_id) WHERE status IN ('initiated', 'ringing', 'in-progress')`,
    );
    await queryRunner.query(
      `CREATE INDEX calls_dial_unsettled ON calls (dial_started_at) WHERE dial_state IN ('pending', 'dialing')`,
    );
    // Caller numbers rotate: the next dial uses position (dials_placed mod count).
    await queryRunner.query(`ALTER TABLE campaigns ADD COLUMN dials_placed integer NOT NULL DEFAULT 0`);
    await queryRunner.query(
      `CREATE INDEX leads_dialable ON leads (campaign_id, id) WHERE status IN ('created', 'rescheduled')`,
    );
    // What the local dialer was asked to do, so development and tests can see every dial request.
    await queryRunner.query(`
      CREATE TABLE local_dial_requests (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        attempt_id varchar(128) NOT NULL,
        request jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX local_dial_requests_attempt_id ON local_dial_requests (attempt_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE local_dial_requests`);
    await queryRunner.query(`DROP INDEX leads_dialable`);
    await queryRunner.query(`ALTER TABLE campaigns DROP COLUMN dials_placed`);
    await queryRunner.query(`DROP INDEX calls_dial_unsettled`);
    await queryRunner.query(`DROP INDEX calls_campaign_in_flight`);
    await queryRunner.query(`
      ALTER TABLE calls DROP COLUMN secondary_contact_id, DROP COLUMN phone_number_id, DROP COLUMN dial_started_at,
        DROP COLUMN dial_state`);
  }
}
