import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The voice runtime's side of a call: the tokens a session hands out (stored as SHA-256 of the token, each valid for
 * its call's routes until it expires; a retried session adds one, so no runtime holding an earlier one is cut off),
 * the call's events (transcript turns and notes under the runtime's own `seq`, which makes a retried post a no-op,
 * and the tool invocations the service made for it), and the `call.started` webhook a session owes. Events and
 * tokens go with their call.
 */
export class VoiceRuntime1764127000000 implements MigrationInterface {
  name = 'VoiceRuntime1764127000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE call_tokens (
        token_hash char(64) PRIMARY KEY,
        call_id integer NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX call_tokens_call_id ON call_tokens (call_id)`);
    await queryRunner.query(`CREATE INDEX call_tokens_expires_at ON call_tokens (expires_at)`);
    await queryRunner.query(`
      CREATE TABLE call_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        call_id integer NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
        seq integer,
        type varchar(16) NOT NULL CHECK (type IN ('transcript', 'note', 'tool_call')),
        at timestamptz NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        -- The runtime numbers its own events; the service's tool invocations have no number of the runtime's.
        CHECK ((type = 'tool_call') = (seq IS NULL)),
        UNIQUE (call_id, seq)
      )`);
    await queryRunner.query(`CREATE INDEX call_events_call_order ON call_events (call_id, at, id)`);
    await queryRunner.query(`
      ALTER TABLE calls
        ADD COLUMN started_event_id varchar(64),
        ADD COLUMN started_webhook_due boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE calls DROP COLUMN started_webhook_due, DROP COLUMN started_event_id`);
    await queryRunner.query(`DROP TABLE call_events`);
    await queryRunner.query(`DROP TABLE call_tokens`);
  }
}
