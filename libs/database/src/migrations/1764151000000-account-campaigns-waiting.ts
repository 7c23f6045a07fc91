import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Whether a campaign of the account found no call slot free and waits for one: set by the dialer's claim (which holds
 * the account's slot row), read by the next final write of any call of the account, which then has the account's
 * running campaigns looked at once rather than at the dialer's next periodic look.
 */
export class AccountCampaignsWaiting1764151000000 implements MigrationInterface {
  name = 'AccountCampaignsWaiting1764151000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE account_call_slots ADD COLUMN campaigns_waiting boolean NOT NULL DEFAULT false`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE account_call_slots DROP COLUMN campaigns_waiting`);
  }
}
