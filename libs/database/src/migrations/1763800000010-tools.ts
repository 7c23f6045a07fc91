import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Tools1763800000010 implements MigrationInterface {
  name = 'Tools1763800000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE tools (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(64) NOT NULL,
        description varchar(255) NOT NULL,
        endpoint varchar(2048) NOT NULL,
        method varchar(8) NOT NULL CHECK (method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
        body_format varchar(8) NOT NULL DEFAULT 'json' CHECK (body_format IN ('json', 'form')),
        timeout_seconds integer NOT NULL DEFAULT 10 CHECK (timeout_seconds BETWEEN 1 AND 30),
        headers jsonb NOT NULL DEFAULT '[]',
        static_fields jsonb NOT NULL DEFAULT '[]',
        schema jsonb NOT NULL DEFAULT '[]',
        automation_flow_id varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT tools_user_id_name UNIQUE (user_id, name)
      )`);
    await queryRunner.query(`CREATE INDEX tools_user_id_id ON tools (user_id, id)`);
    // Which assistants use which tools. The foreign key to assistants is added with the assistants table;
    // deleting a tool detaches it from every assistant.
    await queryRunner.query(`
      CREATE TABLE assistant_tools (
        assistant_id integer NOT NULL,
        tool_id integer NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
        PRIMARY KEY (assistant_id, tool_id)
      )`);
    await queryRunner.query(`CREATE INDEX assistant_tools_tool_id ON assistant_tools (tool_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE assistant_tools`);
    await queryRunner.query(`DROP TABLE tools`);
  }
}
