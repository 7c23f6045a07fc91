import { spawnSync } from 'node:child_process';
import Redis from 'ioredis';
import { PrivateRedis } from '../bench/faults/support/services';
import { generateToken } from '@app/platform';
import { bearer, createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack, recordQueries } from './support/stack';
import { QUEUE_BACKEND, REDIS_CLUSTER_NODES, REDIS_URL } from './support/test-environment';
import { waitFor } from './support/wait-for';
import { TestRoutesModule, slowRequests } from './support/test-routes.module';

describe('Error shapes', () => {
  let stack: Stack;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await startStack({ worker: false, apiModules: [TestRoutesModule] });
    account = await createAccount(stack);
  });
  afterAll(() => stack.close());

  it('answers malformed JSON with 400 and a clear message', async () => {
    const response = await stack.http
      .post('/api/user/api-keys')
      .set(account.auth)
      .set('Content-Type', 'application/json')
      .send('{"name": ');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: 'The request body is not valid JSON.' });
  });

  it('answers a JSON array where an object is expected with 400', async () => {
    const response = await stack.http
      .post('/api/user/api-keys')
      .set(account.auth)
      .send([{ name: 'x' }]);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: 'The request body must be a JSON object.' });
  });

  it('refuses a body over 1 MB with 413, never 5xx', async () => {
    const response = await stack.http
      .post('/api/user/api-keys')
      .set(account.auth)
      .send({ name: 'x'.repeat(1_100_000) });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: 'The request body is too large.' });
  });

  it('keys nested errors by dot path and counts the rest', async () => {
    const response = await stack.http
      .post('/api/test/nested')
      .set(account.auth)
      .send({ items: [{ name: 'ok' }, { name: 'too long' }, {}], timeout: 31 });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The items.1.name field must not be greater than 5 characters. (and 2 more errors)',
      errors: {
        'items.1.name': ['The items.1.name field must not be greater than 5 characters.'],
        'items.2.name': ['The items.2.name field is required.'],
        timeout: ['The timeout field must be between 1 and 30.'],
      },
    });
  });

  it('says "1 more error" in the singular', async () => {
    const response = await stack.http.post('/api/test/nested').set(account.auth).send({ items: 'nope', timeout: 'x' });
    expect(response.status).toBe(422);
    expect(response.body.message).toBe('The items field must be an array. (and 1 more error)');
    expect(response.body.errors.timeout).toEqual(['The timeout field must be an integer.']);
  });

  it('ignores unknown fields', async () => {
    const response = await stack.http
      .post('/api/test/nested')
      .set(account.auth)
      .send({ items: [{ name: 'a', admin: true }], user_id: 99 })
      .expect(201);
    expect(response.body).toEqual({ items: [{ name: 'a' }] });
  });

  it('answers an unknown route with 404 {message}', async () => {
    const response = await stack.http.get('/api/no/such/route').set(account.auth).expect(404);
    expect(response.body).toEqual({ message: 'Not found.' });
  });

  it('hides internal errors behind 500 {message: "Server Error."}', async () => {
    const response = await stack.http.get('/api/test/boom').set(account.auth).expect(500);
    expect(response.body).toEqual({ message: 'Server Error.' });
    expect(JSON.stringify(response.body)).not.toContain('secret');
  });

  it('echoes a request id, or makes one', async () => {
    const given = await stack.http.get('/api/health').set('X-Request-Id', 'abc-123');
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await stack.http.get('/api/health');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('drains a request in flight when the app closes', async () => {
    const draining = await startStack({ worker: false, apiModules: [TestRoutesModule] });
    await draining.api.listen(0, '127.0.0.1');
    const { port } = draining.api.getHttpServer().address();
    const started = slowRequests.started;
    const pending = fetch(`http://127.0.0.1:${port}/api/test/slow`);
    await waitFor(async () => (slowRequests.started > started ? true : undefined));
    const closing = draining.close();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ done: true });
    await closing;
  });
});

describe('Rate limits', () => {
  let stack: Stack;

  beforeAll(async () => {
    // A prefix of its own: this low limit must not leak into other suites' counters.
    stack = await startStack({
      worker: false,
      env: { RATE_LIMIT_PER_MINUTE: '5', QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}:rate-limit-suite` },
    });
  });
  afterAll(() => stack.close());

  /** Each test starts with fresh counters (its own Redis keys, or rate_windows rows, are this suite's only). */
  const resetCounters = async () => {
    if (QUEUE_BACKEND === 'postgres') {
      await stack.dataSource.query(`DELETE FROM rate_windows WHERE key LIKE $1`, [
        `${process.env.TEST_QUEUE_PREFIX}:rate-limit-suite:rate:%`,
      ]);
      return;
    }
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${process.env.TEST_QUEUE_PREFIX}:rate-limit-suite:rate:*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  };

  const tokenOf = async () => {
    const account = await createAccount(stack);
    await resetCounters();
    return account;
  };

  it('gives each credential one budget across every route, with the budget in headers', async () => {
    const first = await tokenOf();
    const second = await createAccount(stack);
    const remaining: string[] = [];
    for (const path of [
      '/api/user/me',
      '/api/user/api-keys',
      '/api/user/knowledgebases',
      '/api/user/me',
      '/api/user/tools',
    ]) {
      const response = await stack.http.get(path).set(first.auth).expect(200);
      expect(response.headers['x-ratelimit-limit']).toBe('5');
      remaining.push(response.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await stack.http.get('/api/user/knowledgebases').set(first.auth);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Too Many Attempts.' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    await stack.http.get('/api/user/me').set(second.auth).expect(200);
  });

  it('limits made-up tokens per client address, but never refuses a valid key from that address', async () => {
    const owner = await tokenOf();
    const key = (await stack.http.post('/api/user/api-keys').set(owner.auth).send({ name: 'Unused' }).expect(201)).body
      .api_key.token as string;
    await resetCounters();
    for (let attempt = 0; attempt < 6; attempt++) {
      await stack.http
        .get('/api/user/me')
        .set(bearer(generateToken('apiKey')))
        .expect(attempt < 5 ? 401 : 429);
    }
    const limited = await stack.http.get('/api/user/me').set(bearer(generateToken('apiKey')));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Without a well-formed token there is nothing to look up: refused at once.
    const queries = recordQueries(stack.dataSource);
    try {
      await stack.http.get('/api/user/me').set(bearer('garbage')).expect(429);
      await stack.http.get('/api/user/me').expect(429);
      expect(queries.statements()).toEqual([]);
    } finally {
      queries.restore();
    }
    // The same address's valid, never-used key: counted against itself only.
    const valid = await stack.http.get('/api/user/me').set(bearer(key)).expect(200);
    expect(valid.headers['x-ratelimit-remaining']).toBe('4');
  });

  it('counts requests without credentials per address too, but never health checks', async () => {
    const client = { 'X-Forwarded-For': '203.0.113.8' };
    for (let attempt = 0; attempt < 5; attempt++) await stack.http.get('/api/user/me').set(client).expect(401);
    await stack.http.get('/api/user/me').set(client).expect(429);
    await stack.http.get('/api/user/me').set({ 'X-Forwarded-For': '203.0.113.9' }).expect(401);
    await stack.http.get('/api/health').set(client).expect(200);
  });
});

describe('Client addresses behind proxies', () => {
  it('reads X-Forwarded-For only from the proxies TRUST_PROXY names', async () => {
    const prefix = `${process.env.TEST_QUEUE_PREFIX}:trust-proxy-suite`;
    for (const [index, [trust, separate]] of (
      [
        ['loopback', true],
        ['false', false],
        ['192.0.2.1', false],
      ] as const
    ).entries()) {
      const stack = await startStack({
        worker: false,
        env: { RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: trust, QUEUE_PREFIX: `${prefix}:${index}` },
      });
      try {
        // The tests' requests come from 127.0.0.1, a loopback proxy to the first stack and a client to the others.
        for (let attempt = 0; attempt < 2; attempt++)
          await stack.http.get('/api/user/me').set('X-Forwarded-For', '203.0.113.1').expect(401);
        const other = await stack.http.get('/api/user/me').set('X-Forwarded-For', '203.0.113.2');
        expect({ trust, status: other.status }).toEqual({ trust, status: separate ? 401 : 429 });
      } finally {
        await stack.close();
      }
    }
  }, 60_000);
});

/** Whether this machine can start a Redis of the test's own (the outage below stops it). */
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
const ownRedisPossible = redisServerInstalled && QUEUE_BACKEND === 'redis' && !REDIS_CLUSTER_NODES();

(ownRedisPossible ? describe : describe.skip)('Rate limits while Redis is down', () => {
  let stack: Stack;
  let redis: PrivateRedis;

  beforeAll(async () => {
    // A Redis of its own, so that stopping it touches nothing else of the run.
    redis = await PrivateRedis.start();
    stack = await startStack({ worker: false, env: { RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: redis.url } });
  });
  /** Whether the test stopped its Redis and has not started it again. */
  let redisDown = false;
  afterAll(async () => {
    // Back up first (if a failure left it down), so that the queues close cleanly instead of waiting for a server
    // that is gone; a second start on the same port would leave the first process running.
    if (redisDown) await redis.resume();
    await stack.close();
    await redis.stop();
  });

  it('keeps each key’s budget per process, keeps a spent key refused, and counts in Redis again once it is back', async () => {
    const spent = await createAccount(stack);
    const fresh = await createAccount(stack);
    for (let attempt = 0; attempt < 5; attempt++) await stack.http.get('/api/user/me').set(spent.auth).expect(200);
    await stack.http.get('/api/user/me').set(spent.auth).expect(429);

    await redis.stop();
    redisDown = true;
    // The spent key stays refused; a fresh one gets its budget counted here, and no more.
    await stack.http.get('/api/user/me').set(spent.auth).expect(429);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      statuses.push((await stack.http.get('/api/user/me').set(fresh.auth)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);

    await redis.resume();
    redisDown = false;
    // An empty Redis (a restart without persistence) counts from zero again, in the store every process shares.
    const another = await createAccount(stack);
    const back = await waitFor(async () => {
      const response = await stack.http.get('/api/user/me').set(another.auth);
      return response.status === 200 && response.headers['x-ratelimit-remaining'] ? response : undefined;
    });
    expect(back.headers['x-ratelimit-remaining']).toBe('4');
    const client = new Redis(redis.url);
    try {
      expect((await client.keys('*rate:*')).length).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  }, 60_000);
});
