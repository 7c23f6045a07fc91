import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The two-digit country calling codes (ITU-T E.164; libphonenumber's metadata agrees, and the voice runtime's e2e
 * test checks the function below against it for every country). `1` and `7` are the only one-digit codes and every
 * other is three digits: the codes are prefix-free, so a number's own digits tell where its code ends.
 */
const TWO_DIGIT_CALLING_CODES = [
  '20', '27', '30', '31', '32', '33', '34', '36', '39', '40', '41', '43', '44', '45', '46', '47', '48', '49', '51',
  '52', '53', '54', '55', '56', '57', '58', '60', '61', '62', '63', '64', '65', '66', '81', '82', '84', '86', '90',
  '91', '92', '93', '94', '95', '98',
]; // prettier-ignore

/**
 * `national_phone_number(phone_number)`: a stored number's national significant number, what follows its country
 * calling code (`+14155550142` -> `4155550142`, `+390612345678` -> `0612345678`); an extension (no `+`) is its own.
 * Indexed, it finds the number an inbound call dialled in whatever form the carrier wrote it (`4155550142`,
 * `14155550142`, `02071838750`) in one statement: the national number is always the tail of the digits dialled, so
 * the session looks up each tail and keeps the numbers that read the dialled form as themselves in their country.
 */
export class PhoneNumbersByNationalNumber1764131500000 implements MigrationInterface {
  name = 'PhoneNumbersByNationalNumber1764131500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const twoDigits = TWO_DIGIT_CALLING_CODES.map((code) => `'${code}'`).join(', ');
    await queryRunner.query(`
      CREATE FUNCTION national_phone_number(number text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
          SELECT CASE WHEN number NOT LIKE '+%' THEN number
                      WHEN substr(number, 2, 1) IN ('1', '7') THEN substr(number, 3)
                      WHEN substr(number, 2, 2) IN (${twoDigits}) THEN substr(number, 4)
                      ELSE substr(number, 5) END
        $$`);
    await queryRunner.query(
      `CREATE INDEX phone_numbers_national_number ON phone_numbers (national_phone_number(phone_number))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX phone_numbers_national_number`);
    await queryRunner.query(`DROP FUNCTION national_phone_number(text)`);
  }
}
