import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import Redis from 'ioredis';
import { loadConfig, type AppConfig } from '@app/config';
import { hashToken } from '@app/platform';
import { dropDatabase, ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { createApiApp } from '../../apps/api/src/api.app';
import { createWorkerApp } from '../../apps/worker/src/worker.app';
import { PrivateRedis } from '../faults/support/services';
import { sipTrunkRequest } from '../../test/support/factories';
import { onInterrupt } from './report';

/** Only this machine's Postgres is ever used, unless a benchmark names another server. */
const SERVER_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchStack {
  config: AppConfig;
  /** http://127.0.0.1:PORT of the API */
  baseUrl: string;
  api: INestApplication;
  worker: INestApplication;
  /** Stops both apps, drops the database and deletes the run's Redis keys (if it used Redis). */
  close(): Promise<void>;
}

export interface BenchEnvironmentOptions {
  /** The PostgreSQL server's maintenance database; this machine's on 127.0.0.1:5432 by default. */
  serverDatabaseUrl?: string;
  /**
   * Whether the run uses Redis; false on the postgres queue backend. A run's Redis is a private one it starts on a
   * free loopback port and stops at the end, so that two runs, or a run and the tests, never share one; with
   * BENCH_REDIS_URL, that server instead, under the run's own key prefix, whose keys are deleted at the end.
   */
  redis?: boolean;
  /** Applies a build's migrations to the fresh database: this checkout's unless another build's are given. */
  migrate?: (databaseUrl: string) => Promise<unknown>;
}

/** A benchmark run's own database and Redis prefix (its name), and the Redis it uses. */
export interface BenchEnvironment {
  name: string;
  databaseUrl: string;
  redisUrl: string;
  /** Drops the database (unless `keepDatabase`, for `EXPLAIN` by hand) and the Redis keys, and stops a private Redis. */
  clean(options?: { keepDatabase?: boolean }): Promise<void>;
}

/**
 * The configuration of a benchmark run against `environment` (its database, its Redis, and its name as the Redis
 * prefix): quiet logs, a fixed encryption key; `overrides` last.
 */
export function benchConfig(
  environment: Pick<BenchEnvironment, 'name' | 'databaseUrl' | 'redisUrl'>,
  overrides: Record<string, string> = {},
): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: environment.databaseUrl,
    REDIS_URL: environment.redisUrl,
    QUEUE_PREFIX: environment.name,
    LOG_LEVEL: 'silent',
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    METRICS_PORT: '0',
    ...overrides,
  });
}

/**
 * A fresh database `va_bench_<time>_<hex>` (BENCH_DATABASE_PREFIX instead of `va_bench_`) and a Redis prefix of the
 * same name, on a private Redis (see `BenchEnvironmentOptions.redis`).
 */
export async function createBenchEnvironment(options: BenchEnvironmentOptions = {}): Promise<BenchEnvironment> {
  const name = `${process.env.BENCH_DATABASE_PREFIX ?? 'va_bench_'}${Date.now()}_${randomBytes(3).toString('hex')}`;
  const url = new URL(options.serverDatabaseUrl ?? SERVER_DATABASE_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const shared = process.env.BENCH_REDIS_URL;
  const privateRedis = options.redis === false || shared ? undefined : await PrivateRedis.start();
  // A run on the postgres queue backend names a Redis it never connects to.
  const redisUrl = shared ?? privateRedis?.url ?? 'redis://127.0.0.1:1';
  let cleaning: Promise<void> | undefined;
  const clean = ({ keepDatabase = false } = {}) =>
    (cleaning ??= (async () => {
      forget();
      if (!keepDatabase) {
        await dropDatabase(databaseUrl).catch((error: Error) => console.error(`dropping ${name}: ${error.message}`));
      }
      if (shared && options.redis !== false) await deleteRedisKeys(shared, `${name}:*`);
      await privateRedis?.stop();
    })());
  const forget = onInterrupt(clean);
  try {
    await ensureDatabase(databaseUrl);
    await (options.migrate ?? runMigrations)(databaseUrl);
  } catch (error) {
    await clean();
    throw error;
  }
  return { name, databaseUrl, redisUrl, clean };
}

async function deleteRedisKeys(redisUrl: string, pattern: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Boots the real API and worker in this process the way test/support/stack.ts does, against a fresh database
 * and Redis prefix. The API listens on 127.0.0.1 on an ephemeral port and is driven over real HTTP.
 */
export async function startBenchStack(
  overrides: Record<string, string> = {},
  options: Pick<BenchEnvironmentOptions, 'serverDatabaseUrl'> = {},
): Promise<BenchStack> {
  const environment = await createBenchEnvironment({ ...options, redis: overrides.QUEUE_BACKEND !== 'postgres' });
  let api: INestApplication | undefined;
  let worker: INestApplication | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      forget();
      await Promise.allSettled([api?.close(), worker?.close()]);
      await environment.clean();
    })());
  // On an interrupt the apps are stopped before the database is dropped under them.
  const forget = onInterrupt(close);
  try {
    const config = benchConfig(environment, {
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      CRAWL_DELAY_MS: '0',
      // The pollers below send far more than the default 600 requests a minute from one token.
      RATE_LIMIT_PER_MINUTE: '1000000',
      ...overrides,
    });
    api = await createApiApp(config);
    await api.listen(0, '127.0.0.1');
    worker = await createWorkerApp(config);
    await worker.listen(0, '127.0.0.1');
    const { port } = api.getHttpServer().address() as AddressInfo;
    return { config, baseUrl: `http://127.0.0.1:${port}`, api, worker, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A client of the API with a freshly registered account's session token. */
export class ApiClient {
  private constructor(
    readonly baseUrl: string,
    readonly token: string,
    readonly userId: number,
  ) {}

  /**
   * The statement the API runs to authenticate each request of this client (its session token, by digest), for
   * a bare reference that runs every statement a request costs.
   */
  credentialLookup(): [string, unknown[]] {
    return [
      `SELECT credential.id AS token_id, credential.last_used_at, users.id AS user_id,
              users.name AS user_name, users.email AS user_email
         FROM session_tokens credential
         JOIN users ON users.id = credential.user_id
        WHERE credential.token_hash = $1 AND credential.expires_at > now()`,
      [hashToken(this.token)],
    ];
  }

  static async register(baseUrl: string): Promise<ApiClient> {
    const response = await fetch(`${baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Bench',
        email: `bench-${randomBytes(6).toString('hex')}@example.com`,
        password: 'correct horse battery staple',
      }),
    });
    if (response.status !== 201) throw new Error(`register answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { token: string; user: { id: number } };
    return new ApiClient(baseUrl, body.token, body.user.id);
  }

  async request<T = any>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  /** An outbound assistant in the first language, with any further fields given; returns its id. */
  async createOutboundAssistant(fields: Record<string, unknown> = {}): Promise<number> {
    const languages = await this.request<{ id: number }[]>('GET', '/api/user/assistants/languages');
    const body = await this.request<{ data: { id: number } }>(
      'POST',
      '/api/user/assistant',
      { name: 'Caller', type: 'outbound', language_id: languages[0].id, ...fields },
      201,
    );
    return body.data.id;
  }

  /** A SIP trunk number (local provisioner) answered by a new inbound assistant with `fields`; the number. */
  async createAnsweredNumber(fields: Record<string, unknown>): Promise<string> {
    const trunk = await this.request<{ data: { id: number; phone_number: string } }>(
      'POST',
      '/api/user/phone-numbers/sip-trunks',
      sipTrunkRequest(),
      201,
    );
    await this.request(
      'POST',
      '/api/user/assistant',
      { type: 'inbound', phone_number_id: trunk.data.id, ...fields },
      201,
    );
    return trunk.data.phone_number;
  }

  async createKnowledgebase(name: string): Promise<number> {
    const body = await this.request<{ data: { id: number } }>('POST', '/api/user/knowledgebases', { name }, 201);
    return body.data.id;
  }
}
