import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { replaceIndexConcurrently } from '../replace-index';

/**
 * The lead list's phone number filter reads only the account's own entries, as the call list's does since migration
 * 1764121000000 (which says why pg_trgm's index could not): the same keys, the account and a hash of every three
 * characters in a row of the number. Built concurrently, the pg_trgm index dropped once the new one is valid.
 */
export class LeadsPhoneNumberPerAccount1764126000000 implements MigrationInterface {
  name = 'LeadsPhoneNumberPerAccount1764126000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'leads_account_phone_number',
      'leads USING gin (account_number_trigrams(user_id, phone_number))',
      'leads_phone_number_trgm',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'leads_phone_number_trgm',
      'leads USING gin (phone_number gin_trgm_ops)',
      'leads_account_phone_number',
    );
  }
}
