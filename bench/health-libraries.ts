/**
 * Readiness (`GET /api/health/ready`: Postgres `SELECT 1` and Redis `PING`) as the service answers it, against the
 * same two checks written with @nestjs/terminus, in one process and one run. Two minimal Nest apps listen on
 * 127.0.0.1 on ephemeral ports, against one throwaway database and this machine's Redis: (a) the service's own
 * HealthModule (HealthController, HealthService, ShutdownState) and (b) TerminusModule with HealthCheckService,
 * TypeOrmHealthIndicator and a Redis indicator built on HealthIndicatorService (terminus's MicroserviceHealthIndicator
 * would need @nestjs/microservices, which the service does not have). 20 connections, alternating rounds of each
 * (and of the service's liveness route, a floor: the framework and the load generator without any check); reports
 * requests/s, p50/p99 latency and this process's CPU time per request (both apps and the load generator run here,
 * so only the difference between rows is the health code's), the body each answers, and what each answers while
 * it shuts down after SIGTERM with a one-second drain. @nestjs/terminus (MIT) is not a dependency of the service;
 * install it for this run only:
 *
 *   npm install --no-save @nestjs/terminus
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/health-libraries.ts
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  type Abstract,
  type DynamicModule,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { AppConfig, redisOptionsFromUrl } from '@app/config';
import { HealthModule, REDIS } from '@app/platform';
import { dataSourceOptions } from '../libs/database/src/data-source-options';
import { runLoad, type LoadResult } from './support/http-load';
import { benchConfig, createBenchEnvironment } from './support/stack';
import { fixed, median, nowMs, printTable, runMain } from './support/report';

const CONNECTIONS = 20;
const SECONDS = 3;
const ROUNDS = 4;
/** SHUTDOWN_DRAIN_SECONDS for ours, gracefulShutdownTimeoutMs for terminus. */
const DRAIN_SECONDS = 1;
const TERMINUS: string = '@nestjs/terminus';

/** The part of @nestjs/terminus used here, typed by hand so that the service type-checks without it installed. */
type Check = PromiseLike<Record<string, unknown>>;
type Instance<T> = T extends Abstract<infer I> ? I : never;
interface Terminus {
  TerminusModule: { forRoot(options: { logger?: boolean; gracefulShutdownTimeoutMs?: number }): DynamicModule };
  HealthCheck(): MethodDecorator;
  HealthCheckService: Abstract<{ check(indicators: (() => Check)[]): Promise<Record<string, unknown>> }>;
  TypeOrmHealthIndicator: Abstract<{ pingCheck(key: string): Check }>;
  HealthIndicatorService: Abstract<{
    check(key: string): { attempt(work: () => Promise<void>): Check & { withTimeout(ms: number): Check } };
  }>;
}

interface Case {
  name: string;
  origin: string;
  path: string;
}

interface Run extends LoadResult {
  cpuUsPerRequest: number;
}

async function drive(target: Case, seconds: number): Promise<Run> {
  const cpu = process.cpuUsage();
  const result = await runLoad({
    origin: target.origin,
    path: target.path,
    headers: {},
    connections: CONNECTIONS,
    seconds,
    serverPid: process.pid,
  });
  const used = process.cpuUsage(cpu);
  return { ...result, cpuUsPerRequest: (used.user + used.system) / Math.max(1, result.requests + result.errors) };
}

/** One request on its own connection (so that a closing server is not held open by keep-alive). */
function probe(url: string): Promise<{ status: number; body: string } | { refused: string }> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ refused: error.code ?? error.message }));
  });
}

async function boot(module: Type): Promise<{ app: INestApplication; origin: string }> {
  const app = await NestFactory.create(module, { logger: false });
  app.setGlobalPrefix('api');
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, origin: `http://127.0.0.1:${port}` };
}

/**
 * Closes the app as its SIGTERM handler would (`app.close('SIGTERM')`) and asks readiness every 100 ms until the
 * server refuses connections: what a load balancer sees while the process drains.
 */
async function shutdownTimeline(
  app: INestApplication,
  origin: string,
): Promise<{ answers: string; firstBody: string; refusedAfterMs: number; closedAfterMs: number }> {
  const started = nowMs();
  let closedAfterMs = Number.NaN;
  const closing = (app as unknown as { close(signal?: string): Promise<void> })
    .close('SIGTERM')
    .then(() => void (closedAfterMs = nowMs() - started));
  const counts = new Map<number, number>();
  let firstBody = '';
  let refusedAfterMs: number;
  for (;;) {
    const answer = await probe(`${origin}/api/health/ready`);
    if ('refused' in answer) {
      refusedAfterMs = nowMs() - started;
      break;
    }
    counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
    firstBody ||= answer.body;
    await sleep(100);
  }
  await closing;
  const answers = [...counts].map(([status, count]) => `${status} x ${count}`).join(', ');
  return { answers, firstBody, refusedAfterMs, closedAfterMs };
}

/** Lines of the TypeScript files in a directory, and bytes and files of an installed package. */
function sourceLines(directory: string): number {
  return readdirSync(directory)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .reduce((sum, file) => sum + readFileSync(join(directory, file), 'utf8').split('\n').length, 0);
}

function packageSize(directory: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      const inner = packageSize(path);
      bytes += inner.bytes;
      files += inner.files;
    } else {
      bytes += statSync(path).size;
      files++;
    }
  }
  return { bytes, files };
}

async function main(): Promise<void> {
  // Loaded only here, by a name the type checker does not follow: the service does not depend on it.
  const { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule, TypeOrmHealthIndicator } =
    (await import(TERMINUS)) as Terminus;
  const terminusRoot = dirname(require.resolve(`${TERMINUS}/package.json`));
  const terminusPackage = JSON.parse(readFileSync(join(terminusRoot, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
  };

  const environment = await createBenchEnvironment();
  const config = benchConfig(environment, { SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS) });
  // One pool (the service's options and size) and one Redis client (as RedisModule makes it), shared by both apps.
  const dataSource = new DataSource(dataSourceOptions(environment.databaseUrl));
  const redis = new Redis({ ...redisOptionsFromUrl(environment.redisUrl), lazyConnect: false, maxRetriesPerRequest: 2 });
  redis.on('error', (error: Error) => console.error(`redis: ${error.message}`));
  const shared = [
    { provide: DataSource, useValue: dataSource },
    { provide: REDIS, useValue: redis },
  ];

  @Module({ imports: [HealthModule.forRoot([...shared, { provide: AppConfig, useValue: config }])] })
  class OwnHealthApp {}

  /** A Redis PING the way terminus 11+ documents custom indicators. */
  @Injectable()
  class RedisHealthIndicator {
    constructor(
      @Inject(HealthIndicatorService) private readonly indicators: Instance<typeof HealthIndicatorService>,
      @Inject(REDIS) private readonly client: Redis,
    ) {}

    pingCheck(key: string) {
      return this.indicators
        .check(key)
        .attempt(async () => void (await this.client.ping()))
        .withTimeout(1000);
    }
  }

  @Controller('health')
  class TerminusHealthController {
    constructor(
      @Inject(HealthCheckService) private readonly health: Instance<typeof HealthCheckService>,
      @Inject(TypeOrmHealthIndicator) private readonly database: Instance<typeof TypeOrmHealthIndicator>,
      @Inject(RedisHealthIndicator) private readonly redisCheck: RedisHealthIndicator,
    ) {}

    @Get('ready')
    @HealthCheck()
    ready() {
      return this.health.check([() => this.database.pingCheck('database'), () => this.redisCheck.pingCheck('redis')]);
    }
  }

  @Module({
    imports: [TerminusModule.forRoot({ logger: false, gracefulShutdownTimeoutMs: DRAIN_SECONDS * 1000 })],
    controllers: [TerminusHealthController],
    providers: [...shared, RedisHealthIndicator],
  })
  class TerminusHealthApp {}

  const apps: INestApplication[] = [];
  try {
    await dataSource.initialize();
    await redis.ping();
    const own = await boot(OwnHealthApp);
    apps.push(own.app);
    const other = await boot(TerminusHealthApp);
    apps.push(other.app);

    const cases: Case[] = [
      { name: 'ours: HealthService readiness', origin: own.origin, path: '/api/health/ready' },
      { name: `@nestjs/terminus ${terminusPackage.version}`, origin: other.origin, path: '/api/health/ready' },
      { name: 'floor: our liveness (no check)', origin: own.origin, path: '/api/health' },
    ];
    const bodies = await Promise.all(cases.slice(0, 2).map((target) => probe(`${target.origin}${target.path}`)));

    for (const target of cases) await drive(target, 1);
    const runs = new Map<string, Run[]>(cases.map((target) => [target.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first so neither always follows the other.
      const order = round % 2 === 0 ? cases : [cases[1], cases[0], cases[2]];
      for (const target of order) runs.get(target.name)!.push(await drive(target, SECONDS));
    }
    printTable(
      `Readiness (Postgres SELECT 1 + Redis PING), ${CONNECTIONS} connections, ${SECONDS} s a run, median of ${ROUNDS} alternating rounds`,
      ['app', 'requests/s', 'p50 ms', 'p99 ms', 'CPU us/request', 'non-200'],
      cases.map((target) => {
        const results = runs.get(target.name)!;
        return [
          target.name,
          fixed(median(results.map((run) => run.perSecond)), 0),
          fixed(median(results.map((run) => run.p50Ms)), 2),
          fixed(median(results.map((run) => run.p99Ms)), 2),
          fixed(median(results.map((run) => run.cpuUsPerRequest)), 0),
          String(results.reduce((sum, run) => sum + run.errors, 0)),
        ];
      }),
      [
        'CPU is this whole process (both apps, the pool, the Redis client and the load generator), per answered request;',
        'the floor row is what the framework and the load generator cost without any check.',
      ],
    );

    console.log('\n## Readiness body while healthy');
    for (const [index, body] of bodies.entries()) {
      console.log(`${cases[index].name}: ${'refused' in body ? body.refused : `${body.status} ${body.body}`}`);
    }

    const timelines = [];
    for (const [index, app] of [own.app, other.app].entries()) {
      timelines.push(await shutdownTimeline(app, [own.origin, other.origin][index]));
      apps.splice(apps.indexOf(app), 1);
    }
    printTable(
      `Readiness after app.close('SIGTERM'), asked every 100 ms until refused (drain ${DRAIN_SECONDS} s each)`,
      ['app', 'answers', 'refused after ms', 'closed after ms'],
      timelines.map((timeline, index) => [
        cases[index].name,
        timeline.answers,
        fixed(timeline.refusedAfterMs, 0),
        fixed(timeline.closedAfterMs, 0),
      ]),
    );
    console.log('\n## Readiness body while draining');
    for (const [index, timeline] of timelines.entries()) console.log(`${cases[index].name}: ${timeline.firstBody}`);

    const installed = packageSize(terminusRoot);
    printTable(
      'Code',
      ['', 'size'],
      [
        ['ours: libs/platform/src/health/*.ts', `${sourceLines(join(__dirname, '../libs/platform/src/health'))} lines`],
        [
          `@nestjs/terminus ${terminusPackage.version} (${terminusPackage.license}), installed`,
          `${installed.files} files, ${fixed(installed.bytes / 1024, 0)} KiB`,
        ],
      ],
    );
  } finally {
    await Promise.allSettled(apps.map((app) => app.close()));
    if (dataSource.isInitialized) await dataSource.destroy();
    await redis.quit().catch(() => redis.disconnect());
    await environment.clean();
  }
}

runMain(main);
