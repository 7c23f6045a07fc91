import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Campaigns1763800000060 implements MigrationInterface {
  name = 'Campaigns1763800000060';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(`
      CREATE TABLE campaigns (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        assistant_id integer REFERENCES assistants (id) ON DELETE SET NULL,
        timezone varchar(64) NOT NULL DEFAULT 'UTC',
        max_calls_in_parallel integer NOT NULL DEFAULT 3 CHECK (max_calls_in_parallel BETWEEN 1 AND 10),
        allowed_hours_start_time varchar(5),
        allowed_hours_end_time varchar(5),
        allowed_days jsonb NOT NULL,
        max_retries integer NOT NULL DEFAULT 3 CHECK (max_retries BETWEEN 1 AND 5),
        retry_interval integer NOT NULL DEFAULT 60 CHECK (retry_interval BETWEEN 10 AND 4320),
        status varchar(16) NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'in-progress', 'stopped', 'completed')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX campaigns_user_id_id ON campaigns (user_id, id DESC)`);
    await queryRunner.query(`
      CREATE TABLE campaign_phone_numbers (
        campaign_id integer NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        phone_number_id integer NOT NULL REFERENCES phone_numbers (id) ON DELETE CASCADE,
        position integer NOT NULL,
        PRIMARY KEY (campaign_id, phone_number_id)
      )`);

    await queryRunner.query(`
      CREATE TABLE leads (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        campaign_id integer NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        phone_number varchar(32) NOT NULL,
        variables jsonb NOT NULL DEFAULT '{}',
        status varchar(32) NOT NULL DEFAULT 'created' CHECK (status IN
          ('created', 'scheduled', 'processing', 'completed', 'rescheduled', 'reached-max-retries', 'blacklisted')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Newest first for the account, with each single filter served by its own index.
    await queryRunner.query(`CREATE INDEX leads_user_id_id ON leads (user_id, id DESC)`);
    await queryRunner.query(`CREATE INDEX leads_user_id_status_id ON leads (user_id, status, id DESC)`);
    await queryRunner.query(`CREATE INDEX leads_campaign_id_id ON leads (campaign_id, id DESC)`);
    await queryRunner.query(`CREATE INDEX leads_campaign_id_phone_number ON leads (campaign_id, phone_number)`);
    await queryRunner.query(`CREATE INDEX leads_user_id_created_at ON leads (user_id, created_at, id)`);
    await queryRunner.query(`CREATE INDEX leads_phone_number_trgm ON leads USING gin (phone_number gin_trgm_ops)`);

    await queryRunner.query(`
      CREATE TABLE lead_secondary_contacts (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        lead_id integer NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
        position integer NOT NULL,
        phone_number varchar(32) NOT NULL,
        variables jsonb NOT NULL DEFAULT '{}',
        status varchar(32) NOT NULL DEFAULT 'created',
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX lead_secondary_contacts_lead_id ON lead_secondary_contacts (lead_id, position)`,
    );

    // A CSV import: the file until it is read, where the worker got to (it resumes there), and its outcome.
    await queryRunner.query(`
      CREATE TABLE lead_imports (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        campaign_id integer NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
        file bytea,
        rows_total integer NOT NULL DEFAULT 0,
        rows_imported integer NOT NULL DEFAULT 0,
        rows_failed integer NOT NULL DEFAULT 0,
        rows_done integer NOT NULL DEFAULT 0,
        error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE lead_import_errors (
        import_id integer NOT NULL REFERENCES lead_imports (id) ON DELETE CASCADE,
        row integer NOT NULL,
        "column" varchar(255) NOT NULL,
        message text NOT NULL,
        PRIMARY KEY (import_id, row, "column")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'lead_import_errors',
      'lead_imports',
      'lead_secondary_contacts',
      'leads',
      'campaign_phone_numbers',
      'campaigns',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
