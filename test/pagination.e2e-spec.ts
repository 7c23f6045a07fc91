import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { TestRoutesModule } from './support/test-routes.module';

describe('Pagination envelopes', () => {
  let stack: Stack;
  let account: TestAccount;
  /** The test routes page through the languages: as many as the database holds. */
  let TOTAL: number;

  beforeAll(async () => {
    stack = await startStack({ worker: false, apiModules: [TestRoutesModule] });
    account = await createAccount(stack);
    [{ total: TOTAL }] = await stack.dataSource.query(`SELECT count(*)::int AS total FROM languages`);
  });
  afterAll(() => stack.close());

  // The host a trusted proxy (the test client is on loopback, which TRUST_PROXY trusts by default) forwards.
  const get = (path: string) => stack.http.get(path).set(account.auth).set('X-Forwarded-Host', 'api.test');

  it('renders Laravel’s full envelope with absolute URLs', async () => {
    const response = await get('/api/test/pages/full?per_page=5&page=2').expect(200);
    const lastPage = Math.ceil(TOTAL / 5);
    const base = 'http://api.test/api/test/pages/full';
    expect(response.body).toMatchObject({
      current_page: 2,
      first_page_url: `${base}?per_page=5&page=1`,
      from: 6,
      to: 10,
      last_page: lastPage,
      last_page_url: `${base}?per_page=5&page=${lastPage}`,
      next_page_url: `${base}?per_page=5&page=3`,
      prev_page_url: `${base}?per_page=5&page=1`,
      path: base,
      per_page: 5,
      total: TOTAL,
    });
    expect(response.body.data).toHaveLength(5);
    expect(response.body.data[0]).toEqual({
      id: expect.any(Number),
      name: expect.any(String),
      iso_2: expect.any(String),
    });
    const labels = response.body.links.map((link: { label: string }) => link.label);
    // 13 pages (65 languages / 5): Laravel shows them all, no gaps.
    expect(labels).toEqual([
      '&laquo; Previous',
      ...Array.from({ length: lastPage }, (_, i) => String(i + 1)),
      'Next &raquo;',
    ]);
    expect(response.body.links[2]).toEqual({ url: `${base}?per_page=5&page=2`, label: '2', active: true });
    expect(response.body.links[0]).toEqual({
      url: `${base}?per_page=5&page=1`,
      label: '&laquo; Previous',
      active: false,
    });
  });

  it('never echoes a Host the client made up: without APP_URL, links name the address the server listens on', async () => {
    // Listening on a port of its own, so that both requests reach the same address (closed with the app).
    const server = stack.api.getHttpServer() as Server;
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const page = (host: string) =>
      stack.http.get('/api/test/pages/full?per_page=5').set(account.auth).set('Host', host).expect(200);
    expect((await page('attacker.example')).body.first_page_url).toBe(
      `http://127.0.0.1:${port}/api/test/pages/full?per_page=5&page=1`,
    );
    expect((await page(`localhost:${port}`)).body.first_page_url).toBe(
      `http://localhost:${port}/api/test/pages/full?per_page=5&page=1`,
    );
  });

  it('puts "..." gaps in long page lists', async () => {
    const response = await get('/api/test/pages/full?per_page=1&page=30').expect(200);
    const labels = response.body.links.map((link: { label: string }) => link.label);
    expect(labels).toEqual([
      '&laquo; Previous',
      '1',
      '2',
      '...',
      '27',
      '28',
      '29',
      '30',
      '31',
      '32',
      '33',
      '...',
      String(TOTAL - 1),
      String(TOTAL),
      'Next &raquo;',
    ]);
    expect(response.body.links[3]).toEqual({ url: null, label: '...', active: false });
  });

  it('has null neighbours and null from/to where Laravel does', async () => {
    const first = await get('/api/test/pages/full').expect(200);
    expect(first.body.prev_page_url).toBeNull();
    expect(first.body.per_page).toBe(15);
    expect(first.body.links[0].url).toBeNull();

    const beyond = await get('/api/test/pages/full?page=999').expect(200);
    expect(beyond.body).toMatchObject({ current_page: 999, data: [], from: null, to: null, next_page_url: null });
  });

  it('treats a page that is not a whole number >= 1 as page 1', async () => {
    for (const page of ['abc', '0', '-3', '1.5']) {
      const response = await get(`/api/test/pages/full?page=${page}`).expect(200);
      expect(response.body.current_page).toBe(1);
    }
  });

  it('refuses per_page outside 1..100 with 422', async () => {
    for (const perPage of ['0', '101']) {
      const response = await get(`/api/test/pages/full?per_page=${perPage}`).expect(422);
      expect(response.body).toEqual({
        message: 'The per page field must be between 1 and 100.',
        errors: { per_page: ['The per page field must be between 1 and 100.'] },
      });
    }
    const text = await get('/api/test/pages/full?per_page=ten').expect(422);
    expect(text.body.errors.per_page).toEqual(['The per page field must be an integer.']);
  });

  it('renders the slim envelope', async () => {
    const response = await get('/api/test/pages/slim?per_page=10&page=3').expect(200);
    expect(Object.keys(response.body).sort()).toEqual(['current_page', 'data', 'per_page', 'total']);
    expect(response.body).toMatchObject({ current_page: 3, per_page: 10, total: TOTAL });
    expect(response.body.data).toHaveLength(10);
  });
});

describe('Links behind a proxy, without APP_URL', () => {
  /** A stack listening on a port of its own, so the links can name the address requests reach. */
  const listening = async (env: Record<string, string>) => {
    const stack = await startStack({ worker: false, env });
    const server = stack.api.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { stack, own: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  /** Every URL of a list route's envelope (an account with one assistant: one page), with the headers sent. */
  const urls = async (stack: Stack, account: TestAccount, headers: Record<string, string>) => {
    const response = await stack.http.get('/api/user/assistants/get').set(account.auth).set(headers).expect(200);
    const body = response.body as {
      first_page_url: string;
      last_page_url: string;
      path: string;
      links: { url: string | null }[];
    };
    return [body.path, body.first_page_url, body.last_page_url, ...body.links.map((link) => link.url)].filter(
      (url): url is string => url !== null,
    );
  };
  const origins = async (stack: Stack, account: TestAccount, headers: Record<string, string>) => [
    ...new Set((await urls(stack, account, headers)).map((url) => url.replace(/\/api\/user\/assistants\/get.*$/, ''))),
  ];

  describe('from a proxy TRUST_PROXY trusts (loopback, the default), in development', () => {
    let stack: Stack;
    let own: string;
    let account: TestAccount;

    beforeAll(async () => {
      ({ stack, own } = await listening({ NODE_ENV: 'development' }));
      account = await createAccount(stack);
      const [language] = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body;
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'Links', type: 'inbound', language_id: language.id })
        .expect(201);
    });
    afterAll(() => stack.close());

    it('takes a forwarded http or https and a forwarded host[:port]', async () => {
      expect(await origins(stack, account, { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.test' })).toEqual([
        'https://api.test',
      ]);
      expect(
        await origins(stack, account, { 'X-Forwarded-Proto': 'HTTP, https', 'X-Forwarded-Host': 'API.test:8443' }),
      ).toEqual(['http://api.test:8443']);
      expect(await origins(stack, account, { 'X-Forwarded-Host': '[2001:db8::1]:8080' })).toEqual([
        'http://[2001:db8::1]:8080',
      ]);
    });

    it('ignores a forwarded protocol other than http or https: the connection’s own', async () => {
      for (const proto of ['javascript', 'data', 'file', 'ftp', 'https:', 'https://evil.example', ' ', 'ht tp'])
        expect({
          proto,
          origins: await origins(stack, account, { 'X-Forwarded-Proto': proto, 'X-Forwarded-Host': 'api.test' }),
        }).toEqual({
          proto,
          origins: ['http://api.test'],
        });
    });

    it('ignores a forwarded host that is not a host[:port]: the address the server listens on', async () => {
      const hostile = [
        'evil.example/path',
        'evil.example?x=1',
        'evil.example#x',
        'user@evil.example',
        'user:pass@evil.example',
        'evil.example:99999',
        'evil.example:http',
        'evil example',
        'javascript:alert(1)',
        'evil.example\\@api.test',
        '[not-an-address]',
        '-evil.example',
        '%65vil.example',
      ];
      for (const host of hostile)
        expect({ host, origins: await origins(stack, account, { 'X-Forwarded-Host': host }) }).toEqual({
          host,
          origins: [own],
        });
    });
  });

  describe('from a peer TRUST_PROXY does not trust', () => {
    let stack: Stack;
    let own: string;
    let account: TestAccount;

    beforeAll(async () => {
      // Only a proxy at another address is trusted: the test client on loopback is not it.
      ({ stack, own } = await listening({ NODE_ENV: 'development', TRUST_PROXY: '10.0.0.7' }));
      account = await createAccount(stack);
    });
    afterAll(() => stack.close());

    it('ignores X-Forwarded-Proto and X-Forwarded-Host, however well-formed', async () => {
      for (const headers of [
        { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.test' },
        { 'X-Forwarded-Proto': 'javascript', 'X-Forwarded-Host': 'evil.example/x' },
      ])
        expect(await origins(stack, account, headers)).toEqual([own]);
    });
  });
});
