import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { PrivatePostgres, PrivateRedis } from '../bench/faults/support/services';
import { ensureDatabase, runMigrations } from '../libs/database/src/data-source-options';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { QUEUE_BACKEND, REDIS_CLUSTER_NODES } from './support/test-environment';
import { waitFor, waitForDocument } from './support/wait-for';

/**
 * Postgres and Redis servers of the test's own (nothing else on the machine is touched), stopped with SIGSTOP: a
 * server that hangs keeps its connections open and answers nothing, where a killed one refuses at once. Small bounds
 * keep the test short; `app-config.spec.ts` pins the defaults.
 */
const BOUNDS = {
  REDIS_COMMAND_TIMEOUT_MS: '500',
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
  DATABASE_STATEMENT_TIMEOUT_MS: '1500',
};
/** Room above a bound for the rest of the request's work on a busy 2-core machine. */
const SLACK_MS = 1500;
/** Readiness gives each check 2 s (`runCheck`). */
const READINESS_BOUND_MS = 2000;
/** A request still unanswered by then is taken as hung: the servers stay stopped until after the assertions. */
const CLIENT_GIVES_UP_MS = 10_000;

const canRun =
  QUEUE_BACKEND === 'redis' &&
  !REDIS_CLUSTER_NODES() &&
  PrivatePostgres.available &&
  spawnSync('redis-server', ['--version']).status === 0;

const UNAVAILABLE = { message: 'Service temporarily unavailable. Please try again.' };

(canRun ? describe : describe.skip)('A dependency that hangs instead of refusing', () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let stack: Stack;
  let account: TestAccount;
  let knowledgebase: number;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([PrivatePostgres.start(), PrivateRedis.start()]);
    const databaseUrl = postgres.url('hangs');
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    stack = await startStack({
      env: { ...BOUNDS, QUEUE_BACKEND: 'redis', DATABASE_URL: databaseUrl, REDIS_URL: redis.url },
    });
    account = await createAccount(stack);
    knowledgebase = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Hangs' }).expect(201)
    ).body.data.id;
    // A database migrated from nothing, the search's related words included: over a minute on a busy machine.
  }, 180_000);
  afterAll(async () => {
    // Thawed first (when an assertion failed while stopped), so that the apps close instead of waiting on them.
    postgres?.thaw();
    redis?.thaw();
    await stack?.close();
    await redis?.stop();
    await postgres?.remove();
  }, 60_000);

  /** Sends a request and times it; a request not answered within CLIENT_GIVES_UP_MS fails the test. */
  const timed = async (send: () => request.Test) => {
    const started = Date.now();
    const response = await send().timeout(CLIENT_GIVES_UP_MS);
    return { status: response.status, body: response.body, headers: response.headers, ms: Date.now() - started };
  };
  const upload = (name: string) =>
    stack.http
      .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
      .set(account.auth)
      .field('name', name)
      .field('type', 'txt')
      .attach('file', Buffer.from(`Document ${name}: open nine to five.`), `${name}.txt`);
  const worker = () => request(stack.worker!.getHttpServer());
  const documentsNamed = async (name: string) =>
    Number(
      (await stack.dataSource.query(`SELECT count(*) AS n FROM documents WHERE name = $1`, [name]))[0].n as string,
    );

  /** Both apps' readiness answers 503 naming the check within its bound, while liveness stays 200. */
  const expectReadinessDown = async (check: 'redis' | 'database') => {
    for (const [app, client] of [
      ['api', stack.http],
      ['worker', worker()],
    ] as const) {
      const ready = await timed(() => client.get('/api/health/ready'));
      expect({ app, status: ready.status, check: ready.body.checks[check].status }).toEqual({
        app,
        status: 503,
        check: 'down',
      });
      expect(ready.ms).toBeLessThan(READINESS_BOUND_MS + SLACK_MS);
      await client.get('/api/health').expect(200);
    }
  };

  /** Once the server answers again, both apps turn ready on their own, logins work and the worker takes new work. */
  const expectRecovered = async (documentName: string) => {
    await waitFor(async () => ((await stack.http.get('/api/health/ready')).status === 200 ? true : undefined));
    await waitFor(async () => ((await worker().get('/api/health/ready')).status === 200 ? true : undefined));
    await stack.http
      .post('/api/auth/login')
      .send({ email: account.email, password: account.password })
      .expect(200);
    const created = await upload(documentName).expect(201);
    expect((await waitForDocument(stack, account, knowledgebase, created.body.data.id)).status).toBe('active');
  };

  it('with Redis stopped: counts requests per process, refuses logins and creates with 503, each within its bound, and recovers', async () => {
    const commandBound = Number(BOUNDS.REDIS_COMMAND_TIMEOUT_MS);
    redis.freeze();

    const me = await timed(() => stack.http.get('/api/user/me').set(account.auth));
    expect({ status: me.status, remaining: me.headers['x-ratelimit-remaining'] }).toEqual({
      status: 200,
      remaining: expect.any(String),
    });
    expect(me.ms).toBeLessThan(commandBound + SLACK_MS);

    // The login throttle fails closed, as with Redis killed.
    const login = await timed(() =>
      stack.http.post('/api/auth/login').send({ email: account.email, password: account.password }),
    );
    expect({ status: login.status, body: login.body }).toEqual({ status: 503, body: UNAVAILABLE });
    expect(login.ms).toBeLessThan(commandBound + SLACK_MS);

    // The rate limit's command and the enqueue's each wait one bound; the document is not left behind.
    const create = await timed(() => upload('while-redis-hangs'));
    expect({ status: create.status, body: create.body }).toEqual({
      status: 503,
      body: { error: 'Could not start processing the document. Please try again.' },
    });
    expect(create.ms).toBeLessThan(2 * commandBound + SLACK_MS);
    expect(await documentsNamed('while-redis-hangs')).toBe(0);

    await expectReadinessDown('redis');

    redis.thaw();
    await expectRecovered('after-redis-hung');
  }, 90_000);

  it('with Postgres stopped: answers 503 within its bound, on every connection of the pool, and recovers', async () => {
    const bound = Number(BOUNDS.DATABASE_CONNECT_TIMEOUT_MS) + Number(BOUNDS.DATABASE_STATEMENT_TIMEOUT_MS);
    postgres.freeze();

    // More at once than the pool's 10 connections: none may wait behind a connection stuck on the stopped server.
    const reads = await Promise.all(
      Array.from({ length: 12 }, () => timed(() => stack.http.get('/api/user/me').set(account.auth))),
    );
    for (const read of reads) {
      expect({ status: read.status, body: read.body }).toEqual({ status: 503, body: UNAVAILABLE });
      expect(read.ms).toBeLessThan(bound + SLACK_MS);
    }
    // Again, on the connections the pool has made since.
    const again = await timed(() => stack.http.get('/api/user/me').set(account.auth));
    expect({ status: again.status, ms: again.ms < bound + SLACK_MS }).toEqual({ status: 503, ms: true });

    const login = await timed(() =>
      stack.http.post('/api/auth/login').send({ email: account.email, password: account.password }),
    );
    expect({ status: login.status, body: login.body }).toEqual({ status: 503, body: UNAVAILABLE });
    expect(login.ms).toBeLessThan(bound + SLACK_MS);

    await expectReadinessDown('database');

    postgres.thaw();
    await expectRecovered('after-postgres-hung');
  }, 90_000);
});
