import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Calls1763800000070 implements MigrationInterface {
  name = 'Calls1763800000070';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A call keeps its assistant's and campaign's names, so its history reads the same after they are deleted.
    await queryRunner.query(`
      CREATE TABLE calls (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        external_id varchar(128) NOT NULL UNIQUE,
        assistant_id integer REFERENCES assistants (id) ON DELETE SET NULL,
        assistant_name varchar(255) NOT NULL,
        campaign_id integer REFERENCES campaigns (id) ON DELETE SET NULL,
        campaign_name varchar(255),
        lead_id integer REFERENCES leads (id) ON DELETE SET NULL,
        type varchar(16) NOT NULL CHECK (type IN ('inbound', 'outbound', 'web')),
        status varchar(32) NOT NULL,
        client_phone_number varchar(32) NOT NULL,
        assistant_phone_number varchar(32) NOT NULL,
        duration integer NOT NULL DEFAULT 0,
        transcript text NOT NULL DEFAULT '',
        variables jsonb NOT NULL DEFAULT '{}',
        evaluation jsonb NOT NULL DEFAULT '{}',
        webhook_response jsonb NOT NULL DEFAULT '{}',
        webhook_event_id varchar(64),
        carrier_cost numeric(12, 4) NOT NULL DEFAULT 0,
        total_cost numeric(12, 4) NOT NULL DEFAULT 0,
        answered_by varchar(16),
        recording_url text,
        ended_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX calls_user_id_id ON calls (user_id, id DESC)`);
    await queryRunner.query(`CREATE INDEX calls_user_id_status_id ON calls (user_id, status, id DESC)`);
    await queryRunner.query(`CREATE INDEX calls_user_id_type_id ON calls (user_id, type, id DESC)`);
    await queryRunner.query(`CREATE INDEX calls_assistant_id_id ON calls (assistant_id, id DESC)`);
    await queryRunner.query(`CREATE INDEX calls_campaign_id_id ON calls (campaign_id, id DESC)`);
    await queryRunner.query(`CREATE INDEX calls_user_id_created_at ON calls (user_id, created_at, id)`);
    await queryRunner.query(
      `CREATE INDEX calls_client_phone_trgm ON calls USING gin (client_phone_number gin_trgm_ops)`,
    );
    // The reaper looks for calls that never ended.
    await queryRunner.query(
      `CREATE INDEX calls_open ON calls (updated_at) WHERE status IN ('initiated', 'ringing', 'in-progress')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE calls`);
  }
}
