import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * When a transfer of the call began, until its outcome is recorded: a second transfer asked for meanwhile (the model
 * asking twice, two runtimes of one call) is refused rather than dialling a second person for the same caller. And
 * when the agent in a warm transfer's consultation room said it has briefed the person, which the transfer waits for
 * before it joins them to the caller (whichever API process each request reached).
 */
export class CallTransferClaim1764152000000 implements MigrationInterface {
  name = 'CallTransferClaim1764152000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE calls ADD COLUMN transfer_started_at timestamptz, ADD COLUMN transfer_briefed_at timestamptz`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE calls DROP COLUMN transfer_started_at, DROP COLUMN transfer_briefed_at`);
  }
}
