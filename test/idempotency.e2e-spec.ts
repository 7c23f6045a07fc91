import { RequestMethod } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { JobQueue, Jobs } from '@app/jobs';
import { IdempotencyStore, requestFingerprint } from '../apps/api/src/idempotency/idempotency.store';
import { POST_ROUTE_INTERCEPTORS } from '../apps/api/src/idempotency/user-post.decorator';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

describe('Idempotency-Key on creates', () => {
  let stack: Stack;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await startStack();
    account = await createAccount(stack);
  });
  afterAll(() => stack.close());

  const countKnowledgebases = async (name: string, owner = account) =>
    (
      await stack.dataSource.query('SELECT count(*)::int AS n FROM knowledgebases WHERE user_id = $1 AND name = $2', [
        owner.id,
        name,
      ])
    )[0].n;

  it('binds the upload and Idempotency-Key interceptors to every POST route of the user API and runs none elsewhere', () => {
    const routes = [...stack.api.get(ModulesContainer).values()]
      .flatMap((module) => [...module.controllers.values()])
      .flatMap(({ metatype }) => {
        const prototype = (metatype as { prototype: Record<string, unknown> }).prototype;
        const base = String(Reflect.getMetadata(PATH_METADATA, metatype!) ?? '');
        return Object.getOwnPropertyNames(prototype)
          .map((name) => ({ name: `${metatype!.name}.${name}`, base, handler: prototype[name] as object }))
          .filter(({ handler }) => typeof handler === 'function' && Reflect.hasMetadata(PATH_METADATA, handler));
      })
      .map(({ name, base, handler }) => ({
        name,
        // The voice runtime's routes act for no account, so an account's Idempotency-Key has nothing to bind to.
        runtime: base.startsWith('internal'),
        method: Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod,
        interceptors: (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[],
      }));
    const posts = routes.filter((route) => route.method === RequestMethod.POST && !route.runtime);
    const others = routes.filter((route) => route.method === RequestMethod.GET || route.runtime);
    expect(posts.length).toBeGreaterThan(10);
    expect(others.filter((route) => route.runtime).length).toBeGreaterThanOrEqual(4);
    expect(others.length).toBeGreaterThan(10);
    for (const route of posts)
      expect({ route: route.name, first: route.interceptors.slice(0, 2) }).toEqual({
        route: route.name,
        first: [...POST_ROUTE_INTERCEPTORS],
      });
    for (const route of others)
      expect({ route: route.name, interceptors: route.interceptors }).toEqual({ route: route.name, interceptors: [] });
  });

  it('returns the first answer to a retry with the same key and body, without creating again', async () => {
    const send = () =>
      stack.http
        .post('/api/user/knowledgebases')
        .set(account.auth)
        .set('Idempotency-Key', 'create-faq-1')
        .send({ name: 'FAQ once', description: 'x' });
    const first = await send().expect(201);
    const second = await send().expect(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await countKnowledgebases('FAQ once')).toBe(1);
  });

  it('matches the same body however its JSON is written', async () => {
    const send = (raw: string) =>
      stack.http
        .post('/api/user/knowledgebases')
        .set(account.auth)
        .set('Idempotency-Key', 'create-order-2')
        .set('Content-Type', 'application/json')
        .send(raw);
    const first = await send('{"name":"Order","description":"d"}').expect(201);
    const second = await send('{ "description": "d", "name": "Order" }').expect(201);
    expect(second.body.data.id).toBe(first.body.data.id);
  });

  it('refuses the same key with another body with 422', async () => {
    await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .set('Idempotency-Key', 'reused-3')
      .send({ name: 'One' })
      .expect(201);
    const response = await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .set('Idempotency-Key', 'reused-3')
      .send({ name: 'Another' });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The Idempotency-Key has already been used for a different request.',
      errors: { 'Idempotency-Key': ['The Idempotency-Key has already been used for a different request.'] },
    });
    expect(await countKnowledgebases('Another')).toBe(0);
  });

  it('creates once when duplicates arrive at the same time', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        stack.http
          .post('/api/user/knowledgebases')
          .set(account.auth)
          .set('Idempotency-Key', 'burst-4')
          .send({ name: 'Burst' }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(201));
    expect(new Set(responses.map((response) => response.body.data.id)).size).toBe(1);
    expect(await countKnowledgebases('Burst')).toBe(1);
  });

  it('keeps keys per account', async () => {
    const other = await createAccount(stack);
    for (const owner of [account, other]) {
      await stack.http
        .post('/api/user/knowledgebases')
        .set(owner.auth)
        .set('Idempotency-Key', 'shared-5')
        .send({ name: 'Mine' })
        .expect(201);
    }
    expect(await countKnowledgebases('Mine', account)).toBe(1);
    expect(await countKnowledgebases('Mine', other)).toBe(1);
  });

  it('fingerprints multipart uploads by their fields and file', async () => {
    const knowledgebase = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Uploads' }).expect(201)
    ).body.data.id;
    const upload = (content: string) =>
      stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .set('Idempotency-Key', 'upload-6')
        .field('name', 'Hours')
        .field('type', 'txt')
        .attach('file', Buffer.from(content), 'hours.txt');
    const first = await upload('Open nine to five.').expect(201);
    const again = await upload('Open nine to five.').expect(201);
    expect(again.body.data.id).toBe(first.body.data.id);
    await upload('Closed on Sundays.').expect(422);
    const [{ n }] = await stack.dataSource.query(
      'SELECT count(*)::int AS n FROM documents WHERE knowledgebase_id = $1',
      [knowledgebase],
    );
    expect(n).toBe(1);
  });

  it('frees the key after a failed request, and after 24 hours', async () => {
    await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .set('Idempotency-Key', 'fix-7')
      .send({ name: '' })
      .expect(422);
    await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .set('Idempotency-Key', 'fix-7')
      .send({ name: 'Fixed' })
      .expect(201);
    await stack.dataSource.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE user_id = $1 AND key = 'fix-7'`,
      [account.id],
    );
    const later = await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .set('Idempotency-Key', 'fix-7')
      .send({ name: 'Fixed' })
      .expect(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await countKnowledgebases('Fixed')).toBe(2);
  });

  it('refuses a malformed key, and leaves routes that do not create alone', async () => {
    const bad = await stack.http
      .post('/api/user/knowledgebases')
      .set(account.auth)
      .set('Idempotency-Key', 'x'.repeat(300))
      .send({ name: 'Too long a key' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(['Idempotency-Key']);

    const session = await createAccount(stack);
    await stack.http.post('/api/auth/logout').set(session.auth).set('Idempotency-Key', 'logout-8').expect(200);
    await stack.http.get('/api/user/me').set(session.auth).expect(401);
  });

  it('purges keys older than 24 hours on the worker, and keeps newer ones', async () => {
    await stack.dataSource.query(
      `INSERT INTO idempotency_keys (user_id, key, request_hash, created_at)
       VALUES ($1, 'old-9', repeat('a', 64), now() - interval '25 hours'), ($1, 'new-9', repeat('b', 64), now())`,
      [account.id],
    );
    await stack.api.get(JobQueue).enqueue(Jobs.purgeIdempotencyKeys, {});
    const keys = await waitFor(async () => {
      const rows: { key: string }[] = await stack.dataSource.query(
        `SELECT key FROM idempotency_keys WHERE user_id = $1 AND key LIKE '%-9' ORDER BY key`,
        [account.id],
      );
      return rows.length === 1 ? rows.map((row) => row.key) : undefined;
    }, 15_000);
    expect(keys).toEqual(['new-9']);
  });

  it('keeps no secret of a replayable answer in plaintext anywhere in the database', async () => {
    const owner = await createAccount(stack);
    const english = (await stack.http.get('/api/user/assistants/languages').set(owner.auth)).body.find(
      (language: { iso_2: string }) => language.iso_2 === 'en',
    ).id;
    const created = async (path: string, body: object, key: string) => {
      const first = await stack.http.post(path).set(owner.auth).set('Idempotency-Key', key).send(body).expect(201);
      const replay = await stack.http.post(path).set(owner.auth).set('Idempotency-Key', key).send(body).expect(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      return first.body;
    };
    const token = (await created('/api/user/api-keys', { name: 'Secret key' }, 'secret-1')).api_key.token;
    const headerValue = 'Bearer sk_live_NEVER_IN_PLAINTEXT_42';
    await created(
      '/api/user/tools',
      {
        name: 'secret_tool',
        description: 'Looks up orders',
        endpoint: 'https://api.example.com/orders',
        method: 'GET',
        headers: [{ name: 'Authorization', value: headerValue }],
      },
      'secret-2',
    );
    const webhookSecret = (
      await created(
        '/api/user/assistant',
        {
          name: 'Hooked',
          type: 'outbound',
          language_id: english,
          webhook_url: 'https://hooks.example.com/calls',
          is_webhook_active: true,
        },
        'secret-3',
      )
    ).data.webhook_secret;
    expect(token).toMatch(/^vak_/);
    expect(webhookSecret).toMatch(/^whsec_/);

    const tables: { name: string }[] = await stack.dataSource.query(
      `SELECT table_schema || '.' || quote_ident(table_name) AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((table) => table.name)).toContain('public.idempotency_keys');
    const secrets = [token, headerValue, 'sk_live_NEVER_IN_PLAINTEXT_42', webhookSecret];
    for (const { name } of tables) {
      // Every row as text, searched in the server: the run's database holds every earlier file's rows by now.
      const leaked: { secret: string }[] = await stack.dataSource.query(
        `SELECT secret FROM unnest($1::text[]) AS secret
          WHERE EXISTS (SELECT 1 FROM ${name} t WHERE strpos(t::text, secret) > 0)`,
        [secrets],
      );
      expect({ table: name, leaks: leaked.map((row) => secrets.indexOf(row.secret)) }).toEqual({
        table: name,
        leaks: [],
      });
    }
  });

  it('lets a retry take over a key whose request died with its process, in seconds', async () => {
    const owner = await createAccount(stack);
    const body = { name: 'Taken over' };
    // What a process killed after claiming the key leaves: the row, no answer, a lease no one renews any more.
    await stack.dataSource.query(
      `INSERT INTO idempotency_keys (user_id, key, request_hash, lease_until, created_at)
       VALUES ($1, 'orphaned-1', $2, now() - interval '1 second', now() - interval '5 seconds')`,
      [owner.id, requestFingerprint({ method: 'POST', originalUrl: '/api/user/knowledgebases', body } as never)],
    );
    const started = Date.now();
    const retry = await stack.http
      .post('/api/user/knowledgebases')
      .set(owner.auth)
      .set('Idempotency-Key', 'orphaned-1')
      .send(body)
      .expect(201);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(retry.body.data.name).toBe('Taken over');
    expect(await countKnowledgebases('Taken over', owner)).toBe(1);
    // Another body under the key is still a different request.
    await stack.http
      .post('/api/user/knowledgebases')
      .set(owner.auth)
      .set('Idempotency-Key', 'orphaned-1')
      .send({ name: 'Something else' })
      .expect(422);
  });

  it('keeps a key held while its request is alive: a duplicate waits for the first answer', async () => {
    const owner = await createAccount(stack);
    const body = { name: 'Held' };
    await stack.dataSource.query(
      `INSERT INTO idempotency_keys (user_id, key, request_hash, lease_until)
       VALUES ($1, 'held-1', $2, now() + interval '30 seconds')`,
      [owner.id, requestFingerprint({ method: 'POST', originalUrl: '/api/user/knowledgebases', body } as never)],
    );
    const duplicate = stack.http
      .post('/api/user/knowledgebases')
      .set(owner.auth)
      .set('Idempotency-Key', 'held-1')
      .send(body)
      .then((response) => response);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The first request answers (as its live process would): the duplicate replays that answer.
    const answer = (await stack.http.post('/api/user/knowledgebases').set(owner.auth).send(body).expect(201)).body;
    await stack.api.get(IdempotencyStore).complete(owner.id, 'held-1', 201, answer);
    const replayed = await duplicate;
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(answer);
    expect(await countKnowledgebases('Held', owner)).toBe(1);
  });
});
