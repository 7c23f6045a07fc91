import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A phone number (E.164, `+...`) has one holder across all accounts: a SIP trunk's number, and a number bought from a
 * carrier and given to an account. The provider routes an inbound call by its number alone, so a second trunk with
 * it would take the first one's calls. Extensions (a SIP trunk's short internal number, no `+`) are unique per
 * account only. Numbers held twice already are listed and the migration stops: which holder keeps one is a decision
 * for the operator, not for a migration.
 */
export class OneNumberOneHolder1763800000120 implements MigrationInterface {
  name = 'OneNumberOneHolder1763800000120';

  async up(queryRunner: QueryRunner): Promise<void> {
    const held: { phone_number: string; ids: number[] }[] = await queryRunner.query(`
      SELECT phone_number, array_agg(id ORDER BY id) AS ids FROM phone_numbers
       GROUP BY phone_number, CASE WHEN phone_number LIKE '+%' THEN NULL ELSE user_id END
      HAVING count(*) > 1`);
    if (held.length > 0) {
      const list = held.map((row) => `${row.phone_number} (phone_numbers ${row.ids.join(', ')})`).join('; ');
      throw new Error(
        `Phone numbers held more than once: ${list}. Delete all but one holder of each, then migrate again.`,
      );
    }
    await queryRunner.query(
      `CREATE UNIQUE INDEX phone_numbers_number_unique ON phone_numbers (phone_number) WHERE phone_number LIKE '+%'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX phone_numbers_extension_unique ON phone_numbers (user_id, phone_number)
        WHERE phone_number NOT LIKE '+%'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX phone_numbers_extension_unique`);
    await queryRunner.query(`DROP INDEX phone_numbers_number_unique`);
  }
}
