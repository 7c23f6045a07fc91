import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A web call (a person in a browser) has no phone numbers: both are null for it, and only for it, so every phone
 * call still carries the two numbers it was made between.
 */
export class WebCallNumbers1764160000000 implements MigrationInterface {
  name = 'WebCallNumbers1764160000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE calls
        ALTER COLUMN client_phone_number DROP NOT NULL,
        ALTER COLUMN assistant_phone_number DROP NOT NULL,
        ADD CONSTRAINT calls_phone_numbers_of_phone_calls
          CHECK (type = 'web' OR (client_phone_number IS NOT NULL AND assistant_phone_number IS NOT NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE calls SET client_phone_number = COALESCE(client_phone_number, ''),
                       assistant_phone_number = COALESCE(assistant_phone_number, '')
       WHERE client_phone_number IS NULL OR assistant_phone_number IS NULL`);
    await queryRunner.query(`
      ALTER TABLE calls
        DROP CONSTRAINT calls_phone_numbers_of_phone_calls,
        ALTER COLUMN client_phone_number SET NOT NULL,
        ALTER COLUMN assistant_phone_number SET NOT NULL`);
  }
}
