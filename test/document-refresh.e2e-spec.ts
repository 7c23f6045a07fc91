import { type LocalSite, type RouteHandler, sendPage, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createAccount, type TestAccount } from './support/factories';
import { HeldPage } from './support/held-page';
import { type Stack, startStack } from './support/stack';
import { waitFor, waitForDocument } from './support/wait-for';

describe('Website refresh', () => {
  let stack: Stack;
  let account: TestAccount;
  let site: LocalSite;
  /** The site as it stands; a test changes it between refreshes. */
  const routes: Record<string, RouteHandler> = {};
  const url = (path: string) => `${site.origin}${path}`;

  const status =
    (code: number): RouteHandler =>
    (_request, response) =>
      response.writeHead(code).end('nope');
  const links = (...paths: string[]) => paths.map((path) => `<a href="${path}">${path}</a>`).join(' ');

  beforeAll(async () => {
    stack = await startStack({
      env: { CRAWL_DELAY_MS: '0', JOB_RETRY_DELAY_MS: '50', DOCUMENT_SWEEP_INTERVAL_SECONDS: '1' },
    });
    account = await createAccount(stack);
    site = await startLocalSite(routes);
  }, 30_000);
  afterAll(async () => {
    await site.close();
    await stack.close();
  });

  const newKnowledgebase = async () =>
    (await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Site' }).expect(201)).body.data
      .id as number;
  const documentPath = (knowledgebaseId: number, documentId: number) =>
    `/api/user/knowledgebases/${knowledgebaseId}/documents/${documentId}`;

  async function website(knowledgebaseId: number, start: string, body: Record<string, unknown> = {}) {
    const created = await stack.http
      .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
      .set(account.auth)
      .send({ name: 'Shop', type: 'website', url: url(start), relative_links_limit: 10, ...body })
      .expect(201);
    const document = await waitForDocument(stack, account, knowledgebaseId, created.body.data.id);
    expect(document.status).toBe('active');
    return document;
  }

  const read = async (knowledgebaseId: number, documentId: number) =>
    (await stack.http.get(documentPath(knowledgebaseId, documentId)).set(account.auth).expect(200)).body.data;

  /** Polls the read until a refresh newer than `after` has finished. */
  const refreshed = (knowledgebaseId: number, documentId: number, after?: string) =>
    waitFor(async () => {
      const document = await read(knowledgebaseId, documentId);
      const finished = document.last_refresh?.finished_at;
      return finished && finished !== after ? document : undefined;
    }, 30_000);

  const found = async (knowledgebaseId: number, query: string) =>
    (
      await stack.http
        .get(`/api/user/knowledgebases/${knowledgebaseId}/search`)
        .query({ query })
        .set(account.auth)
        .expect(200)
    ).body.data.map((result: { source_url: string }) => result.source_url);

  const passageIds = async (documentId: number, path: string) =>
    (
      await stack.dataSource.query('SELECT id FROM passages WHERE document_id = $1 AND source_url = $2 ORDER BY id', [
        documentId,
        url(path),
      ])
    ).map((row: { id: number }) => row.id);

  it('keeps unchanged pages, replaces changed ones, adds new ones, removes gone ones, keeps failing ones', async () => {
    Object.assign(routes, {
      '/shop': sendPage('Shop', `<p>Welcome to the fruit shop.</p>${links('/a', '/b', '/c', '/d')}`),
      '/a': sendPage('Apples', '<p>Apples are picked every autumn.</p>'),
      '/b': sendPage('Bananas', '<p>Bananas arrive on Tuesdays.</p>'),
      '/c': sendPage('Cherries', '<p>Cherries are sold out.</p>'),
      '/d': sendPage('Dates', '<p>Dates come from the desert.</p>'),
    });
    const knowledgebaseId = await newKnowledgebase();
    const created = await website(knowledgebaseId, '/shop', { refresh_interval_hours: 24 });
    expect(created).toMatchObject({ refresh_interval_hours: 24, last_refreshed_at: null, last_refresh: null });
    const apples = await passageIds(created.id, '/a');
    expect(apples.length).toBeGreaterThan(0);

    Object.assign(routes, {
      '/shop': sendPage('Shop', `<p>Welcome to the fruit shop.</p>${links('/a', '/b', '/c', '/d', '/e')}`),
      '/b': sendPage('Bananas', '<p>Blueberries replaced the bananas.</p>'),
      '/c': status(404),
      '/d': status(503),
      '/e': sendPage('Elderberries', '<p>Elderberries are new this year.</p>'),
    });
    const accepted = await stack.http
      .post(`${documentPath(knowledgebaseId, created.id)}/refresh`)
      .set(account.auth)
      .expect(202);
    expect(accepted.body).toEqual({ message: 'Document refresh started.' });

    const document = await refreshed(knowledgebaseId, created.id);
    expect(document.last_refresh).toEqual({
      status: 'succeeded',
      finished_at: expect.stringMatching(/Z$/),
      pages_added: 1,
      pages_changed: 2,
      pages_removed: 1,
      pages_unchanged: 2,
      error: null,
    });
    expect(document.last_refreshed_at).toEqual(document.last_refresh.finished_at);
    expect(document.status).toBe('active');
    expect(document.pages.map((item: { url: string }) => item.url)).toEqual(
      ['/shop', '/a', '/b', '/c', '/d', '/e'].map(url),
    );

    expect(await passageIds(created.id, '/a')).toEqual(apples);
    expect(await found(knowledgebaseId, 'blueberries')).toEqual([url('/b')]);
    expect(await found(knowledgebaseId, 'tuesdays')).toEqual([]);
    expect(await found(knowledgebaseId, 'cherries')).toEqual([]);
    expect(await found(knowledgebaseId, 'desert')).toEqual([url('/d')]);
    expect(await found(knowledgebaseId, 'elderberries')).toEqual([url('/e')]);

    // A page no longer linked is gone too.
    routes['/shop'] = sendPage('Shop', `<p>Welcome to the fruit shop.</p>${links('/a', '/b', '/d')}`);
    await stack.http
      .post(`${documentPath(knowledgebaseId, created.id)}/refresh`)
      .set(account.auth)
      .expect(202);
    const again = await refreshed(knowledgebaseId, created.id, document.last_refresh.finished_at);
    expect(again.last_refresh).toMatchObject({ status: 'succeeded', pages_removed: 1, pages_added: 0 });
    expect(await found(knowledgebaseId, 'elderberries')).toEqual([]);
  }, 60_000);

  it('keeps the previous content and records the error when a refresh fails', async () => {
    routes['/gone'] = sendPage('Hours', '<p>Open on Sundays from noon.</p>');
    const knowledgebaseId = await newKnowledgebase();
    const created = await website(knowledgebaseId, '/gone');
    expect(created.refresh_interval_hours).toBeNull();

    routes['/gone'] = status(503);
    await stack.http
      .post(`${documentPath(knowledgebaseId, created.id)}/refresh`)
      .set(account.auth)
      .expect(202);
    const document = await refreshed(knowledgebaseId, created.id);
    expect(document.last_refresh).toMatchObject({
      status: 'failed',
      error: 'The site answered HTTP 503',
      pages_added: 0,
      pages_removed: 0,
    });
    expect(document.last_refreshed_at).toBeNull();
    expect(document.content_length).toBe(created.content_length);
    expect(await found(knowledgebaseId, 'sundays')).toEqual([url('/gone')]);
  }, 60_000);

  it('refreshes on its own once the interval has passed', async () => {
    routes['/news'] = sendPage('News', '<p>The old headline.</p>');
    const knowledgebaseId = await newKnowledgebase();
    const created = await website(knowledgebaseId, '/news', { refresh_interval_hours: 720 });
    routes['/news'] = sendPage('News', '<p>A fresh headline.</p>');
    // 720 hours pass.
    await stack.dataSource.query(`UPDATE documents SET next_refresh_at = now() - interval '1 second' WHERE id = $1`, [
      created.id,
    ]);
    const document = await refreshed(knowledgebaseId, created.id);
    expect(document.last_refresh).toMatchObject({ status: 'succeeded', pages_changed: 1 });
    expect(await found(knowledgebaseId, 'fresh')).toEqual([url('/news')]);
    const [{ days }] = await stack.dataSource.query(
      `SELECT round(extract(epoch FROM next_refresh_at - now()) / 86400)::int AS days FROM documents WHERE id = $1`,
      [created.id],
    );
    expect(days).toBe(30);
  }, 60_000);

  it('validates the interval, and refuses files, documents still processing and other accounts', async () => {
    const knowledgebaseId = await newKnowledgebase();
    for (const hours of [23, 721, 'daily']) {
      const response = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
        .set(account.auth)
        .send({ name: 'Site', type: 'website', url: url('/a'), refresh_interval_hours: hours })
        .expect(422);
      expect(response.body.errors).toEqual({
        refresh_interval_hours: [
          typeof hours === 'number'
            ? 'The refresh interval hours field must be between 24 and 720.'
            : 'The refresh interval hours field must be an integer.',
        ],
      });
    }

    const file = await stack.http
      .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
      .set(account.auth)
      .field('name', 'Notes')
      .field('type', 'txt')
      .attach('file', Buffer.from('Plain notes.'), 'notes.txt')
      .expect(201);
    const notes = await waitForDocument(stack, account, knowledgebaseId, file.body.data.id);
    expect(notes.refresh_interval_hours).toBeUndefined();
    const refusedFile = await stack.http
      .post(`${documentPath(knowledgebaseId, notes.id)}/refresh`)
      .set(account.auth)
      .expect(422);
    expect(refusedFile.body).toEqual({
      message: 'Only website documents can be refreshed.',
      errors: { document: ['Only website documents can be refreshed.'] },
    });

    const held = new HeldPage('<p>Slow page.</p>');
    routes['/slow'] = held.handler;
    const slow = await stack.http
      .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
      .set(account.auth)
      .send({ name: 'Slow', type: 'website', url: url('/slow') })
      .expect(201);
    await held.requested();
    const refusedProcessing = await stack.http
      .post(`${documentPath(knowledgebaseId, slow.body.data.id)}/refresh`)
      .set(account.auth)
      .expect(422);
    expect(refusedProcessing.body.errors).toEqual({ document: ['The document is still being processed.'] });
    held.release();
    await waitForDocument(stack, account, knowledgebaseId, slow.body.data.id);

    const intruder = await createAccount(stack);
    for (const path of [
      `${documentPath(knowledgebaseId, slow.body.data.id)}/refresh`,
      `${documentPath(knowledgebaseId, 2_147_483_000)}/refresh`,
    ]) {
      const response = await stack.http.post(path).set(intruder.auth).expect(404);
      expect(response.body).toEqual({ error: 'Knowledgebase not found.' });
    }
    const theirs = await stack.http.post('/api/user/knowledgebases').set(intruder.auth).send({ name: 'Mine' });
    const crossed = await stack.http
      .post(`${documentPath(theirs.body.data.id, slow.body.data.id)}/refresh`)
      .set(intruder.auth)
      .expect(404);
    expect(crossed.body).toEqual({ error: 'Document not found.' });
    const missing = await stack.http
      .post(`${documentPath(knowledgebaseId, 2_147_483_000)}/refresh`)
      .set(account.auth)
      .expect(404);
    expect(missing.body).toEqual({ error: 'Document not found.' });
  }, 60_000);
});
