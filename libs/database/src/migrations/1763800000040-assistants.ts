import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Assistants1763800000040 implements MigrationInterface {
  name = 'Assistants1763800000040';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['folders', 'labels']) {
      await queryRunner.query(`
        CREATE TABLE ${table} (
          id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
          name varchar(255) NOT NULL,
          color varchar(16),
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now()
        )`);
      // Names are unique per account whatever their letter case; the index also serves the newest-first list.
      await queryRunner.query(`CREATE UNIQUE INDEX ${table}_user_id_name ON ${table} (user_id, lower(name))`);
      await queryRunner.query(`CREATE INDEX ${table}_user_id_id ON ${table} (user_id, id DESC)`);
    }

    // Calls keep their history when an assistant goes: their foreign key to assistants is ON DELETE SET NULL and
    // each call keeps the assistant's name.
    await queryRunner.query(`
      CREATE TABLE assistants (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        type varchar(16) NOT NULL CHECK (type IN ('inbound', 'outbound')),
        language_id integer NOT NULL REFERENCES languages (id),
        voice_id varchar(255),
        timezone varchar(64) NOT NULL DEFAULT 'UTC',
        initial_message varchar(200),
        system_prompt text,
        knowledgebase_id integer REFERENCES knowledgebases (id) ON DELETE SET NULL,
        phone_number_id integer REFERENCES phone_numbers (id) ON DELETE SET NULL,
        folder_id integer REFERENCES folders (id) ON DELETE SET NULL,
        webhook_url varchar(2048),
        is_webhook_active boolean NOT NULL DEFAULT false,
        webhook_secret_sealed text,
        variables jsonb NOT NULL DEFAULT '{}',
        post_call_schema jsonb NOT NULL DEFAULT '[]',
        max_duration integer NOT NULL DEFAULT 600,
        record boolean NOT NULL DEFAULT false,
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX assistants_user_id_id ON assistants (user_id, id DESC)`);
    await queryRunner.query(`CREATE INDEX assistants_folder_id ON assistants (folder_id) WHERE folder_id IS NOT NULL`);
    await queryRunner.query(
      `CREATE INDEX assistants_knowledgebase_id ON assistants (knowledgebase_id) WHERE knowledgebase_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX assistants_phone_number_id ON assistants (phone_number_id) WHERE phone_number_id IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE assistant_labels (
        assistant_id integer NOT NULL REFERENCES assistants (id) ON DELETE CASCADE,
        label_id integer NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
        PRIMARY KEY (assistant_id, label_id)
      )`);
    await queryRunner.query(`CREATE INDEX assistant_labels_label_id ON assistant_labels (label_id)`);

    await queryRunner.query(`
      CREATE TABLE assistant_secondary_languages (
        assistant_id integer NOT NULL REFERENCES assistants (id) ON DELETE CASCADE,
        language_id integer NOT NULL REFERENCES languages (id) ON DELETE CASCADE,
        position integer NOT NULL,
        PRIMARY KEY (assistant_id, language_id)
      )`);

    // The join table the tools came with gets its assistant side now.
    await queryRunner.query(`DELETE FROM assistant_tools`);
    await queryRunner.query(
      `ALTER TABLE assistant_tools ADD CONSTRAINT assistant_tools_assistant_id_fkey
         FOREIGN KEY (assistant_id) REFERENCES assistants (id) ON DELETE CASCADE`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE assistant_tools DROP CONSTRAINT assistant_tools_assistant_id_fkey`);
    await queryRunner.query(`DROP TABLE assistant_secondary_languages`);
    await queryRunner.query(`DROP TABLE assistant_labels`);
    await queryRunner.query(`DROP TABLE assistants`);
    await queryRunner.query(`DROP TABLE labels`);
    await queryRunner.query(`DROP TABLE folders`);
  }
}
