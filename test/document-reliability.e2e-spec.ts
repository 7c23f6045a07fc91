import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { JobQueue, Jobs } from '@app/jobs';
import { type LocalSite, type RouteHandler, sendHtml, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createWorkerApp } from '../apps/worker/src/worker.app';
import { createAccount } from './support/factories';
import { type Stack, scrapeApiMetrics, startStack, testConfig } from './support/stack';
import { HeldPage } from './support/held-page';
import { waitForDocument } from './support/wait-for';

const page = (body: string) => sendHtml(`<!doctype html><html><body><main>${body}</main></body></html>`);

describe('Document processing reliability', () => {
  let site: LocalSite;
  const routes: Record<string, RouteHandler> = {};

  beforeAll(async () => {
    site = await startLocalSite(routes);
  });
  afterAll(() => site.close());

  describe('outbound address guard, through the API', () => {
    let stack: Stack;

    beforeAll(async () => {
      // Loopback refused too, as in production.
      stack = await startStack({ env: { OUTBOUND_ALLOW_LOOPBACK: 'false', JOB_RETRY_DELAY_MS: '50' } });
    });
    afterAll(() => stack.close());

    it.each([
      ['loopback', (origin: string) => `${origin}/`],
      ['hex IPv4', (origin: string) => origin.replace('127.0.0.1', '0x7f000001') + '/'],
      ['IPv6 loopback', (origin: string) => origin.replace('127.0.0.1', '[::1]') + '/'],
      ['IPv4-mapped IPv6', (origin: string) => origin.replace('127.0.0.1', '[::ffff:127.0.0.1]') + '/'],
      ['localhost', (origin: string) => origin.replace('127.0.0.1', 'localhost') + '/'],
      ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/'],
      ['private network', () => 'http://10.0.0.1/'],
    ])('refuses %s and sends nothing', async (_case, target) => {
      routes['/'] = page('<p>Internal only.</p>');
      const account = await createAccount(stack);
      const knowledgebase = (
        await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'SSRF' }).expect(201)
      ).body.data.id;
      const before = site.requests.length;
      const created = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .send({ name: 'Internal', type: 'website', url: target(site.origin), relative_links_limit: 1 })
        .expect(201);
      const document = await waitForDocument(stack, account, knowledgebase, created.body.data.id);
      expect(document.status).toBe('failed');
      expect(document.error_message).toMatch(/not a public address|refused/i);
      expect(site.requests.length).toBe(before);
    });

    it.each([
      ['decimal IPv4', (origin: string) => origin.replace('127.0.0.1', '2130706433') + '/'],
      ['octal IPv4', (origin: string) => origin.replace('127.0.0.1', '0177.0.0.1') + '/'],
    ])('refuses %s already as an invalid URL', async (_case, target) => {
      const account = await createAccount(stack);
      const knowledgebase = (
        await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'SSRF' }).expect(201)
      ).body.data.id;
      const before = site.requests.length;
      const response = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .send({ name: 'Internal', type: 'website', url: target(site.origin) })
        .expect(422);
      expect(response.body.errors).toEqual({ url: ['The url field must be a valid URL.'] });
      expect(site.requests.length).toBe(before);
    });
  });

  describe('a failed enqueue', () => {
    it('answers 503 asking to try again and leaves no document behind', async () => {
      const healthy = await startStack({ worker: false });
      const account = await createAccount(healthy);
      const knowledgebase = (
        await healthy.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'No Redis' }).expect(201)
      ).body.data.id;
      await healthy.close();

      // A queue backend that does not answer: Redis at an address where nothing listens.
      const broken = await startStack({
        worker: false,
        env: { QUEUE_BACKEND: 'redis', REDIS_URL: 'redis://127.0.0.1:1' },
      });
      try {
        const response = await broken.http
          .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
          .set(account.auth)
          .field('name', 'Lost?')
          .field('type', 'txt')
          .attach('file', Buffer.from('Nothing may be half-written.'), 'a.txt');
        expect(response.status).toBe(503);
        expect(response.body).toEqual({ error: 'Could not start processing the document. Please try again.' });
        const [counts] = await broken.dataSource.query(
          `SELECT (SELECT count(*) FROM documents WHERE knowledgebase_id = $1)::int AS documents,
                  (SELECT count(*) FROM document_files f JOIN documents d ON d.id = f.document_id
                    WHERE d.knowledgebase_id = $1)::int AS files`,
          [knowledgebase],
        );
        expect(counts).toEqual({ documents: 0, files: 0 });
        const metrics = await (await scrapeApiMetrics(broken.api)).text();
        expect(metrics).toMatch(/job_enqueue_failures_total\{queue="documents",job="process-document"\} 1/);
      } finally {
        await broken.close();
      }
    });
  });

  describe('a worker killed mid-job', () => {
    let stack: Stack;
    let child: ChildProcess | undefined;
    const env = {
      QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}:kill-suite`,
      JOB_LOCK_MS: '2000',
      JOB_STALLED_CHECK_MS: '1000',
      CRAWL_DELAY_MS: '0',
    };

    beforeAll(async () => {
      stack = await startStack({ worker: false, env });
    });
    afterAll(async () => {
      child?.kill('SIGKILL');
      await stack.close();
    });

    it('is taken over by another worker, with no duplicate passages', async () => {
      const held = new HeldPage('<main><p>Held page about hinges.</p></main>');
      Object.assign(routes, {
        '/kill/': page(
          '<p>Start page.</p><a href="/kill/a">A</a> <a href="/kill/b">B</a> <a href="/kill/held">Held</a>',
        ),
        '/kill/a': page('<p>Page A about anchors.</p>'),
        '/kill/b': page('<p>Page B about bolts.</p>'),
        '/kill/held': held.handler,
      } satisfies Record<string, RouteHandler>);

      const config = testConfig(env);
      child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/worker/src/main.ts'],
        {
          env: {
            ...process.env,
            NODE_ENV: 'test',
            DATABASE_URL: config.databaseUrl,
            REDIS_URL: config.redisUrl,
            WORKER_PORT: '0',
            LOG_LEVEL: 'silent',
            OUTBOUND_ALLOW_LOOPBACK: 'true',
            ENCRYPTION_KEY: config.encryptionKey.toString('base64'),
            ...env,
          },
          stdio: 'ignore',
        },
      );

      const account = await createAccount(stack);
      const knowledgebase = (
        await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Kill' }).expect(201)
      ).body.data.id;
      const created = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .send({ name: 'Site', type: 'website', url: `${site.origin}/kill/`, relative_links_limit: 5 })
        .expect(201);
      const id = created.body.data.id;

      await held.requested();
      child.kill('SIGKILL');
      await once(child, 'exit');
      held.release();

      const survivor = await createWorkerApp(config);
      await survivor.init();
      try {
        const document = await waitForDocument(stack, account, knowledgebase, id, 30_000);
        expect(document.status).toBe('active');
        expect(document.pages.map((item: { url: string }) => item.url).sort()).toEqual(
          ['/kill/', '/kill/a', '/kill/b', '/kill/held'].map((path) => `${site.origin}${path}`),
        );
        const rows: { content: string; position: number }[] = await stack.dataSource.query(
          'SELECT content, position FROM passages WHERE document_id = $1 ORDER BY position',
          [id],
        );
        expect(rows.map((row) => row.position)).toEqual([0, 1, 2, 3]);
        expect(new Set(rows.map((row) => row.content)).size).toBe(4);
        expect(held.requests).toBe(2);
        const job = await stack.api.get(JobQueue).queue(Jobs.processDocument.queue).getJob(`document-${id}`);
        expect(job?.attemptsStarted).toBeGreaterThanOrEqual(2);
      } finally {
        await survivor.close();
      }
    }, 90_000);
  });
});
