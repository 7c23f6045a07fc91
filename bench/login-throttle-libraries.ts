/**
 * The login throttle's counter store against rate-limiter-flexible, on the same Redis, in one run: per failed login
 * the throttle peeks at a key's count and then adds one (a consume in rate-limiter-flexible's terms, after a get).
 * 50 logins in flight over 1,000 keys, alternating rounds of each; reports operations/s and this process's CPU
 * time per login. rate-limiter-flexible is not a dependency of the service; install it for this run only:
 *
 *   npm install --no-save rate-limiter-flexible && npm run build
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/login-throttle-libraries.ts
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { loadConfig } from '@app/config';
import { RedisWindowCounters } from '@app/platform';
import { PrivateRedis } from './faults/support/services';
import { fixed, nowMs, printTable, runMain } from './support/report';

const LOGINS = 20_000;
const IN_FLIGHT = 50;
const KEYS = 1_000;
const ROUNDS = 3;
const RATE_LIMITER_FLEXIBLE: string = 'rate-limiter-flexible';

interface Store {
  name: string;
  /** One failed login: the check, then the count. */
  failedLogin(key: string): Promise<void>;
}

async function drive(store: Store): Promise<{ perSecond: number; cpuUsPerLogin: number }> {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = nowMs();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < LOGINS) await store.failedLogin(`k${next++ % KEYS}`);
    }),
  );
  const seconds = (nowMs() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { perSecond: LOGINS / seconds, cpuUsPerLogin: (used.user + used.system) / LOGINS };
}

async function main(): Promise<void> {
  const prefix = `va_bench_throttle_${randomBytes(3).toString('hex')}`;
  // A Redis of the run's own (BENCH_REDIS_URL for another), as every benchmark's.
  const privateRedis = process.env.BENCH_REDIS_URL ? undefined : await PrivateRedis.start();
  const redisUrl = process.env.BENCH_REDIS_URL ?? privateRedis!.url;
  const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: redisUrl, QUEUE_PREFIX: prefix });
  const counters = new RedisWindowCounters(config, (error) => console.error(error.message));
  // Loaded only here, by a name the type checker does not follow: the service does not depend on it.
  const { RateLimiterRedis } = (await import(RATE_LIMITER_FLEXIBLE)) as {
    RateLimiterRedis: new (options: { storeClient: Redis; keyPrefix: string; points: number; duration: number }) => {
      get(key: string): Promise<unknown>;
      consume(key: string): Promise<unknown>;
    };
  };
  const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  await once(redis, 'ready');
  // Both clients refuse commands until connected (no offline queue, as in the service).
  while (
    !(await counters.peek('ready').then(
      () => true,
      () => false,
    ))
  )
    await sleep(20);
  const pipelined = new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
  });
  await once(pipelined, 'ready');
  const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:rlf`, points: 5, duration: 60 });
  const limiterPipelined = new RateLimiterRedis({
    storeClient: pipelined,
    keyPrefix: `${prefix}:rlf`,
    points: 5,
    duration: 60,
  });
  const stores: Store[] = [
    {
      name: 'WindowCounters (Redis, EVALSHA)',
      failedLogin: async (key) => {
        await counters.peek(`login-attempts:${key}`);
        await counters.hit(`login-attempts:${key}`, 60_000);
      },
    },
    {
      name: 'rate-limiter-flexible RateLimiterRedis',
      failedLogin: async (key) => {
        await limiter.get(key);
        // Past its points consume rejects with the state; the throttle would answer 429 from it.
        await limiter.consume(key).catch(() => undefined);
      },
    },
    {
      name: 'rate-limiter-flexible, client auto-pipelined',
      failedLogin: async (key) => {
        await limiterPipelined.get(key);
        await limiterPipelined.consume(key).catch(() => undefined);
      },
    },
  ];
  try {
    const results = new Map<string, { perSecond: number[]; cpu: number[] }>();
    for (const store of stores) await drive(store);
    for (let round = 0; round < ROUNDS; round++) {
      for (const store of stores) {
        const { perSecond, cpuUsPerLogin } = await drive(store);
        const entry = results.get(store.name) ?? { perSecond: [], cpu: [] };
        entry.perSecond.push(perSecond);
        entry.cpu.push(cpuUsPerLogin);
        results.set(store.name, entry);
      }
    }
    const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    printTable(
      `Failed logins (check, then count), ${LOGINS} a round, ${IN_FLIGHT} in flight, ${KEYS} keys, median of ${ROUNDS} rounds`,
      ['store', 'logins/s', 'client CPU us/login'],
      stores.map((store) => [
        store.name,
        fixed(middle(results.get(store.name)!.perSecond), 0),
        fixed(middle(results.get(store.name)!.cpu), 1),
      ]),
    );
  } finally {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    pipelined.disconnect();
    await counters.onApplicationShutdown();
    await privateRedis?.stop();
  }
}

runMain(main);
