/*
 * Operator commands, run from the build (`npm run build` first in a source checkout):
 *
 *   npm run cli -- phone-numbers:assign --user <email> --number <E.164> --country <ISO 3166-1 alpha-2>
 *                   [--region <text>] [--sms] [--no-subscription] [--type normal|caller_id] [--nickname <text>]
 *
 * Buying numbers from a carrier happens outside this service; this gives an account a number it bought, which
 * then shows in its phone-number lists.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions, whenUnique } from '@app/database';

/** Refused input: exits 2 with the message, as `fail` does. */
class NumberHeldError extends Error {}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

async function assignPhoneNumber(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      user: { type: 'string' },
      number: { type: 'string' },
      country: { type: 'string' },
      region: { type: 'string' },
      sms: { type: 'boolean', default: false },
      'no-subscription': { type: 'boolean', default: false },
      type: { type: 'string', default: 'normal' },
      nickname: { type: 'string' },
    },
    strict: true,
  });
  if (!values.user) fail('--user <email> is required');
  if (!values.number) fail('--number <E.164 number> is required');
  const country = (values.country ?? '').toUpperCase();
  if (!isSupportedCountry(country)) fail('--country must be an ISO 3166-1 alpha-2 code, e.g. US');
  if (!['normal', 'caller_id'].includes(values.type!)) fail('--type must be normal or caller_id');
  if (values.nickname && values.nickname.length > 50) fail('--nickname must be at most 50 characters');
  const parsed = parsePhoneNumberFromString(values.number, country as CountryCode);
  if (!parsed || !parsed.isValid()) fail(`${values.number} is not a valid phone number for ${country}`);

  const dataSource = new DataSource(dataSourceOptions(loadConfig().databaseUrl, 1));
  await dataSource.initialize();
  try {
    const [user] = await dataSource.query('SELECT id FROM users WHERE lower(email) = lower($1)', [values.user]);
    if (!user) fail(`No account with the email ${values.user}`);
    // The unique index refuses a number some account holds already (as a trunk or as an assigned number).
    const [row] = await whenUnique(
      () =>
        dataSource.query(
          `INSERT INTO phone_numbers (user_id, phone_number, nickname, country_code, type, sms_capable, region, has_active_subscription)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
          [
            user.id,
            parsed.number,
            values.nickname ?? null,
            country,
            values.type,
            values.sms,
            values.region ?? null,
            !values['no-subscription'],
          ],
        ),
      () => new NumberHeldError(`${parsed.number} is held by an account already; release it there first`),
    );
    console.log(JSON.stringify({ id: row.id, user_id: user.id, phone_number: parsed.number, country_code: country }));
  } finally {
    await dataSource.destroy();
  }
}

const commands: Record<string, (argv: string[]) => Promise<void>> = { 'phone-numbers:assign': assignPhoneNumber };
const [command, ...rest] = process.argv.slice(2);
if (!commands[command])
  fail(`Usage: npm run cli -- <command> [options]\nCommands: ${Object.keys(commands).join(', ')}`);
commands[command](rest).catch((error: Error) => {
  console.error(error.message ?? error);
  process.exit(error instanceof NumberHeldError ? 2 : 1);
});
