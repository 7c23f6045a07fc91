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
import { dataSourceOptions, PhoneNumbersRepository, ReadReplicas, UsersRepository, whenUnique } from '@app/database';

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
  // Outside an API request every read goes to the primary: no replicas to name.
  const reads = new ReadReplicas(dataSource, [], 0);
  try {
    const userId = await new UsersRepository(dataSource, reads).idByEmail(values.user);
    if (userId === undefined) fail(`No account with the email ${values.user}`);
    // The unique index refuses a number some account holds already (as a trunk or as an assigned number).
    const id = await whenUnique(
      () =>
        new PhoneNumbersRepository(dataSource, reads).assign(userId, {
          phoneNumber: parsed.number,
          nickname: values.nickname ?? null,
          countryCode: country,
          type: values.type!,
          smsCapable: values.sms,
          region: values.region ?? null,
          hasActiveSubscription: !values['no-subscription'],
        }),
      () => new NumberHeldError(`${parsed.number} is held by an account already; release it there first`),
    );
    console.log(JSON.stringify({ id, user_id: userId, phone_number: parsed.number, country_code: country }));
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
