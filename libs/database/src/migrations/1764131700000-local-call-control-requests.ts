import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * What the local telephony adapter's call control was asked to do (a transfer, a dial into a room, a room made or
 * ended, a web call, a participant token) and how it answered, so development and tests can see every operation
 * whichever process asked for it. Like `local_dial_requests`, it stays empty with a real provider.
 */
export class LocalCallControlRequests1764131700000 implements MigrationInterface {
  name = 'LocalCallControlRequests1764131700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE local_call_control_requests (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        operation varchar(32) NOT NULL,
        room varchar(256) NOT NULL,
        request jsonb NOT NULL,
        outcome jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX local_call_control_requests_room ON local_call_control_requests (room)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE local_call_control_requests`);
  }
}
