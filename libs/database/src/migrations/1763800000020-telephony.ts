import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Telephony1763800000020 implements MigrationInterface {
  name = 'Telephony1763800000020';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE phone_numbers (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        phone_number varchar(32) NOT NULL,
        nickname varchar(50),
        country_code varchar(2),
        type varchar(16) NOT NULL CHECK (type IN ('normal', 'sip', 'caller_id')),
        sms_capable boolean NOT NULL DEFAULT false,
        region varchar(255),
        has_active_subscription boolean NOT NULL DEFAULT true,
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('provisioning', 'active')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX phone_numbers_user_id_id ON phone_numbers (user_id, id)`);

    await queryRunner.query(`
      CREATE TABLE sip_trunks (
        phone_number_id integer PRIMARY KEY REFERENCES phone_numbers (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        sip_trunk_type varchar(16) NOT NULL CHECK (sip_trunk_type IN ('number', 'extension')),
        sip_username varchar(128) NOT NULL,
        sip_password_sealed text NOT NULL,
        sip_address varchar(253) NOT NULL,
        sip_calling_format varchar(16) NOT NULL,
        inbound_authorization_type varchar(8) NOT NULL CHECK (inbound_authorization_type IN ('auth', 'ip')),
        allowed_inbound_ips jsonb,
        outbound_proxy boolean NOT NULL DEFAULT false,
        inbound_trunk_id varchar(64),
        inbound_dispatch_rule_id varchar(64),
        outbound_trunk_id varchar(64),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX sip_trunks_user_id ON sip_trunks (user_id, phone_number_id)`);

    // One row per create or update of a trunk: what was asked (password sealed), and what became of it. The API
    // writes it and waits; the worker provisions and settles it. Whoever settles it first wins, under its row lock.
    await queryRunner.query(`
      CREATE TABLE sip_provisioning_requests (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        -- Kept when the number goes (a create that failed), so whoever waits can still read the outcome.
        phone_number_id integer REFERENCES phone_numbers (id) ON DELETE SET NULL,
        kind varchar(8) NOT NULL CHECK (kind IN ('create', 'update')),
        changes jsonb NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed', 'abandoned')),
        error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        settled_at timestamptz
      )`);

    // Provider resources that must go (replaced, or of a deleted trunk), kept until a delete succeeds.
    await queryRunner.query(`
      CREATE TABLE provider_cleanups (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind varchar(16) NOT NULL CHECK (kind IN ('inbound', 'outbound')),
        trunk_id varchar(64) NOT NULL,
        dispatch_rule_id varchar(64),
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE provider_cleanups`);
    await queryRunner.query(`DROP TABLE sip_provisioning_requests`);
    await queryRunner.query(`DROP TABLE sip_trunks`);
    await queryRunner.query(`DROP TABLE phone_numbers`);
  }
}
