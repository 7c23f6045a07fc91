import type { DynamicModule, INestApplication } from '@nestjs/common';
import request from 'supertest';
import { Client as PgClient } from 'pg';
import { DataSource } from 'typeorm';
import { type AppConfig, loadConfig } from '@app/config';
import { METRICS_PATH, MetricsServer } from '@app/platform';
import { createApiApp } from '../../apps/api/src/api.app';
import { createWorkerApp } from '../../apps/worker/src/worker.app';
import { servedDocuments } from './api-documents';
import { OpenApiConformance } from './openapi-conformance';
import { QUEUE_BACKEND, REDIS_CLUSTER_NODES, REDIS_URL } from './test-environment';

/** Configuration of this test run: its own database and Redis prefix, quiet logs, loopback allowed. */
export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  const queuePrefix = process.env.TEST_QUEUE_PREFIX;
  if (!databaseUrl || !queuePrefix) throw new Error('e2e tests must run through the jest e2e project');
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    ...(REDIS_CLUSTER_NODES() ? { REDIS_CLUSTER_NODES: REDIS_CLUSTER_NODES()! } : {}),
    QUEUE_BACKEND,
    QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    // Every test request comes from 127.0.0.1: one address's budget would be spent across suites within a minute.
    // The rate-limit tests set their own small limit.
    RATE_LIMIT_PER_MINUTE: '1000000',
    // Suites place many calls of one account at once; the concurrency tests set their own small limit.
    ACCOUNT_MAX_CONCURRENT_CALLS: '1000000',
    // A Redis that answers but slowly is not the hung one these bounds are for: on a 2-core machine running two test
    // lanes, a command can wait over the production second. test/hung-dependencies.e2e-spec.ts sets its own bounds.
    REDIS_COMMAND_TIMEOUT_MS: '10000',
    // Any free port: several stacks run in one process, and beside `npm start` on the machine.
    METRICS_PORT: '0',
    ...overrides,
  });
}

export interface Stack {
  config: AppConfig;
  api: INestApplication;
  worker?: INestApplication;
  http: ReturnType<typeof request>;
  dataSource: DataSource;
  close(): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  /** Start the real worker in this process, consuming this run's queues. Default true. */
  worker?: boolean;
  apiModules?: DynamicModule['imports'];
}

/** Boots the real API (and worker) against this run's Postgres and Redis. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const config = testConfig(options.env);
  const api = await createApiApp(config, options.apiModules);
  await api.init();
  const worker = options.worker === false ? undefined : await createWorkerApp(config);
  if (worker) await worker.listen(0, '127.0.0.1');
  const documents = await servedDocuments(request(api.getHttpServer()));
  const stack: Stack = {
    config,
    api,
    worker,
    http: conformingClient(api.getHttpServer(), new OpenApiConformance(documents.public, documents.internal)),
    dataSource: api.get(DataSource),
    // The worker may be replaced by a test; close whichever is current.
    async close() {
      await Promise.all([stack.api.close(), stack.worker?.close()]);
    },
  };
  return stack;
}

type Client = ReturnType<typeof request>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

/**
 * The supertest client, with every response checked against the served OpenAPI document that describes its path
 * (the public one, or the voice runtime's): a response whose status or body that document does not describe fails
 * the request that received it, in whichever test made it.
 */
function conformingClient(server: Parameters<typeof request>[0], conformance: OpenApiConformance): Client {
  const client = request(server);
  const wrapped = { ...client } as Record<string, unknown>;
  for (const method of METHODS) {
    wrapped[method] = (url: string) => {
      const test = client[method](url);
      const end = test.end.bind(test);
      test.end = (callback?: (error: unknown, response: request.Response) => void) =>
        end((error: unknown, response: request.Response) => {
          const violation =
            response &&
            conformance.check(method, url, response.status, response.headers['content-type'], response.body);
          callback?.(error ?? (violation ? new Error(`OpenAPI conformance: ${violation}`) : null), response);
        });
      return test;
    };
  }
  return wrapped as unknown as Client;
}

/** A scrape of the API's metrics listener (METRICS_PORT), as Prometheus makes it. */
export async function scrapeApiMetrics(api: INestApplication): Promise<Response> {
  return fetch(`http://127.0.0.1:${api.get(MetricsServer).port}${METRICS_PATH}`);
}

/**
 * Records the statements the app sends while it is active, in order: every statement its pool's connections send
 * (`DataSource.query`, the entity manager's, a transaction's BEGIN and COMMIT, the pool's own `queryPool`), and none
 * of another pool's (the worker's, a replica's). `restore` stops recording.
 */
export function recordQueries(dataSource: DataSource): { statements: () => string[]; restore: () => void } {
  const clients = (dataSource.driver as unknown as { master: { _clients: PgClient[] } }).master._clients;
  const recorded: string[] = [];
  const original = PgClient.prototype.query as (...args: unknown[]) => unknown;
  const spy = jest.spyOn(PgClient.prototype, 'query').mockImplementation(function (this: PgClient, ...args: unknown[]) {
    if (clients.includes(this)) {
      const statement = args[0] as string | { text?: string } | undefined;
      recorded.push(typeof statement === 'string' ? statement : String(statement?.text));
    }
    return original.apply(this, args) as never;
  });
  return {
    statements: () => [...recorded],
    restore: () => spy.mockRestore(),
  };
}
