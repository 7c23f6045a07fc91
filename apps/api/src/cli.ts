/*
 * Operator commands, run from the build (`npm run build` first in a source checkout):
 *
 *   npm run cli -- phone-numbers:assign --user <email> --number <E.164> --country <ISO 3166-1 alpha-2>
 *                   [--region <text>] [--sms] [--no-subscription] [--type normal|caller_id] [--nickname <text>]
 *                   [--outbound-trunk <LiveKit outbound trunk id>]
 *   npm run cli -- phone-numbers:outbound-trunk --user <email> --number <E.164> (--outbound-trunk <id> | --none)
 *   npm run cli -- accounts:max-concurrent-calls --user <email> (--limit <n> | --default)
 *
 * Buying numbers from a carrier happens outside this service; this gives an account a number it bought, which
 * then shows in its phone-number lists. Calls are placed from it through the provider's outbound trunk the operator
 * names (checked with LiveKit when LIVEKIT_URL and its key are set); without one, `make_call` and campaigns refuse
 * to call from it.
 *
 * An account may have at most ACCOUNT_MAX_CONCURRENT_CALLS calls in progress at once; `accounts:max-concurrent-calls`
 * gives one account its own limit (0 stops it starting calls), or the deployment's again. It applies to the next call
 * the account starts; calls already in progress go on.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { DataSource } from 'typeorm';
import { type AppConfig, loadConfig } from '@app/config';
import {
  AccountCallSlotsRepository,
  dataSourceOptions,
  PhoneNumbersRepository,
  ReadReplicas,
  UsersRepository,
  whenUnique,
} from '@app/database';
import { LiveKitCallDialer, OUTBOUND_TRUNK_ID } from '@app/telephony';

/** The most an operator may give one account: the deployment's own bound (ACCOUNT_MAX_CONCURRENT_CALLS). */
const MAX_CONCURRENT_CALLS_LIMIT = 1_000_000;

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
      'outbound-trunk': { type: 'string' },
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
  const config = loadConfig();
  const outboundTrunkId = values['outbound-trunk'] ?? null;
  if (outboundTrunkId !== null) await checkOutboundTrunk(config, outboundTrunkId);

  await withDatabase(config, async (dataSource, reads) => {
    const userId = await accountOf(dataSource, reads, values.user!);
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
          outboundTrunkId,
        }),
      () => new NumberHeldError(`${parsed.number} is held by an account already; release it there first`),
    );
    console.log(
      JSON.stringify({
        id,
        user_id: userId,
        phone_number: parsed.number,
        country_code: country,
        outbound_trunk_id: outboundTrunkId,
      }),
    );
  });
}

/** Gives an assigned number an outbound trunk (or takes it away), for a number assigned without one. */
async function setOutboundTrunk(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      user: { type: 'string' },
      number: { type: 'string' },
      'outbound-trunk': { type: 'string' },
      none: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.user) fail('--user <email> is required');
  const parsed = values.number ? parsePhoneNumberFromString(values.number) : undefined;
  if (!parsed?.isValid()) fail('--number <E.164 number> is required, as the number was assigned: +14155550100');
  const number = parsed.number;
  if ((values['outbound-trunk'] === undefined) === !values.none)
    fail('either --outbound-trunk <LiveKit outbound trunk id> or --none is required');
  const config = loadConfig();
  const outboundTrunkId = values['outbound-trunk'] ?? null;
  if (outboundTrunkId !== null) await checkOutboundTrunk(config, outboundTrunkId);
  await withDatabase(config, async (dataSource, reads) => {
    const userId = await accountOf(dataSource, reads, values.user!);
    if (!(await new PhoneNumbersRepository(dataSource, reads).setOutboundTrunk(userId, number, outboundTrunkId)))
      fail(`${values.user} holds no assigned number ${number} (a SIP trunk's number has its own outbound trunk)`);
    console.log(JSON.stringify({ user_id: userId, phone_number: number, outbound_trunk_id: outboundTrunkId }));
  });
}

/** Sets (or clears, back to the deployment's) the account's own limit of calls in progress at once. */
async function setMaxConcurrentCalls(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { user: { type: 'string' }, limit: { type: 'string' }, default: { type: 'boolean', default: false } },
    strict: true,
  });
  if (!values.user) fail('--user <email> is required');
  if ((values.limit === undefined) === !values.default) fail('either --limit <calls> or --default is required');
  let limit: number | null = null;
  if (values.limit !== undefined) {
    if (!/^\d{1,7}$/.test(values.limit) || Number(values.limit) > MAX_CONCURRENT_CALLS_LIMIT)
      fail(`--limit must be a whole number from 0 to ${MAX_CONCURRENT_CALLS_LIMIT}`);
    limit = Number(values.limit);
  }
  const config = loadConfig();
  await withDatabase(config, async (dataSource, reads) => {
    const userId = await accountOf(dataSource, reads, values.user!);
    const row = await new AccountCallSlotsRepository(dataSource, reads).setLimit(userId, limit);
    console.log(
      JSON.stringify({
        user_id: userId,
        max_concurrent_calls: row.max_concurrent_calls ?? config.accountMaxConcurrentCalls,
        deployment_default: row.max_concurrent_calls === null,
        calls_in_progress: row.in_progress,
      }),
    );
  });
}

/**
 * An outbound trunk id as LiveKit makes them and, when this deployment reaches LiveKit (LIVEKIT_URL and its key), one
 * that LiveKit holds: a mistyped id would otherwise fail every call placed from the number.
 */
async function checkOutboundTrunk(config: AppConfig, trunkId: string): Promise<void> {
  if (!OUTBOUND_TRUNK_ID.test(trunkId)) fail('--outbound-trunk must be a LiveKit outbound trunk id, e.g. ST_abc123');
  if (!config.livekit) return;
  const exists = await new LiveKitCallDialer(config.livekit, config.livekitAgentName).hasOutboundTrunk(trunkId);
  if (!exists) fail(`LiveKit has no outbound trunk ${trunkId}`);
}

async function withDatabase(
  config: AppConfig,
  work: (dataSource: DataSource, reads: ReadReplicas) => Promise<void>,
): Promise<void> {
  const dataSource = new DataSource(dataSourceOptions(config.databaseUrl, 1));
  await dataSource.initialize();
  try {
    // Outside an API request every read goes to the primary: no replicas to name.
    await work(dataSource, new ReadReplicas(dataSource, [], 0));
  } finally {
    await dataSource.destroy();
  }
}

async function accountOf(dataSource: DataSource, reads: ReadReplicas, email: string): Promise<number> {
  const userId = await new UsersRepository(dataSource, reads).idByEmail(email);
  if (userId === undefined) fail(`No account with the email ${email}`);
  return userId;
}

const commands: Record<string, (argv: string[]) => Promise<void>> = {
  'phone-numbers:assign': assignPhoneNumber,
  'phone-numbers:outbound-trunk': setOutboundTrunk,
  'accounts:max-concurrent-calls': setMaxConcurrentCalls,
};
const [command, ...rest] = process.argv.slice(2);
if (!commands[command])
  fail(`Usage: npm run cli -- <command> [options]\nCommands: ${Object.keys(commands).join(', ')}`);
commands[command](rest).catch((error: Error) => {
  console.error(error.message ?? error);
  process.exit(error instanceof NumberHeldError ? 2 : 1);
});
