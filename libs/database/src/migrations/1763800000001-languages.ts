import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Languages an assistant can speak, with their ISO 639-1 codes. */
export const SEEDED_LANGUAGES: ReadonlyArray<readonly [name: string, iso2: string]> = [
  ['Afrikaans', 'af'],
  ['Albanian', 'sq'],
  ['Arabic', 'ar'],
  ['Armenian', 'hy'],
  ['Azerbaijani', 'az'],
  ['Basque', 'eu'],
  ['Belarusian', 'be'],
  ['Bengali', 'bn'],
  ['Bosnian', 'bs'],
  ['Bulgarian', 'bg'],
  ['Catalan', 'ca'],
  ['Chinese', 'zh'],
  ['Croatian', 'hr'],
  ['Czech', 'cs'],
  ['Danish', 'da'],
  ['Dutch', 'nl'],
  ['English', 'en'],
  ['Estonian', 'et'],
  ['Filipino', 'tl'],
  ['Finnish', 'fi'],
  ['French', 'fr'],
  ['Galician', 'gl'],
  ['Georgian', 'ka'],
  ['German', 'de'],
  ['Greek', 'el'],
  ['Gujarati', 'gu'],
  ['Hebrew', 'he'],
  ['Hindi', 'hi'],
  ['Hungarian', 'hu'],
  ['Icelandic', 'is'],
  ['Indonesian', 'id'],
  ['Irish', 'ga'],
  ['Italian', 'it'],
  ['Japanese', 'ja'],
  ['Kannada', 'kn'],
  ['Kazakh', 'kk'],
  ['Korean', 'ko'],
  ['Latvian', 'lv'],
  ['Lithuanian', 'lt'],
  ['Macedonian', 'mk'],
  ['Malay', 'ms'],
  ['Malayalam', 'ml'],
  ['Marathi', 'mr'],
  ['Nepali', 'ne'],
  ['Norwegian', 'no'],
  ['Persian', 'fa'],
  ['Polish', 'pl'],
  ['Portuguese', 'pt'],
  ['Punjabi', 'pa'],
  ['Romanian', 'ro'],
  ['Russian', 'ru'],
  ['Serbian', 'sr'],
  ['Slovak', 'sk'],
  ['Slovenian', 'sl'],
  ['Spanish', 'es'],
  ['Swahili', 'sw'],
  ['Swedish', 'sv'],
  ['Tamil', 'ta'],
  ['Telugu', 'te'],
  ['Thai', 'th'],
  ['Turkish', 'tr'],
  ['Ukrainian', 'uk'],
  ['Urdu', 'ur'],
  ['Vietnamese', 'vi'],
  ['Welsh', 'cy'],
];

export class Languages1763800000001 implements MigrationInterface {
  name = 'Languages1763800000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE languages (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name varchar(100) NOT NULL,
        iso_2 char(2) NOT NULL
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX languages_iso_2_unique ON languages (iso_2)`);
    const values = SEEDED_LANGUAGES.map((_, index) => `($${index * 2 + 1}, $${index * 2 + 2})`).join(', ');
    await queryRunner.query(`INSERT INTO languages (name, iso_2) VALUES ${values}`, SEEDED_LANGUAGES.flat());
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE languages`);
  }
}
