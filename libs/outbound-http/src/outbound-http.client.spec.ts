import type { LookupAddress } from 'node:dns';
import { OutboundHttpClient, type LookupFunction } from './outbound-http.client';
import { OutboundRequestError } from './outbound-request.error';
import { sendHtml, sendRedirect, startLocalSite, type LocalSite } from '../test/local-site';
import { restrictSocketsToLoopback } from '../test/loopback-only-sockets';
import { SELF_SIGNED } from '../test/self-signed-certificate';

const userAgent = 'OutboundHttpTest/1.0';

/** A lookup answering from a fixed table and failing for anything else, so no test ever asks real DNS. */
function lookupFrom(table: Record<string, string[]>): jest.MockedFunction<LookupFunction> {
  return jest.fn<ReturnType<LookupFunction>, Parameters<LookupFunction>>((hostname, _options, callback) => {
    const addresses = table[hostname];
    if (!addresses)
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  });
}

async function refusalOf(promise: Promise<unknown>): Promise<OutboundRequestError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundRequestError);
    return error as OutboundRequestError;
  }
  throw new Error('Expected the request to be refused');
}

describe('OutboundHttpClient', () => {
  let site: LocalSite;
  let sockets: ReturnType<typeof restrictSocketsToLoopback>;
  const clients: OutboundHttpClient[] = [];
  const createClient = (options: { allowLoopback: boolean; lookup?: LookupFunction }) => {
    const client = new OutboundHttpClient({ userAgent, ...options });
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    sockets = restrictSocketsToLoopback();
    site = await startLocalSite({
      '/': sendHtml('<h1>Hello</h1>', { 'x-test': 'yes' }),
      '/to-metadata': sendRedirect('http://169.254.169.254/latest/meta-data/'),
      '/loop': sendRedirect('/loop'),
      '/to-first': sendRedirect('/first', 302, { connection: 'close' }),
      '/first': sendHtml('first'),
      '/to-root': sendRedirect('/'),
      '/see-other': sendRedirect('/echo', 303),
      '/temporary': sendRedirect('/echo', 307),
      '/echo': sendHtml('echo'),
      '/bad-location': sendRedirect('http://[::1/PATHSECRET'),
      '/large': (_request, response) => response.writeHead(200, { 'content-length': '2000' }).end('x'.repeat(2000)),
      '/endless': (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => response.write('x'.repeat(1024)), 1);
        response.on('close', () => clearInterval(timer));
      },
      '/silent': () => undefined,
      '/stalling-body': (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('partial');
      },
    });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await site.close();
    sockets.restore();
  });

  describe('without loopback access', () => {
    it.each([
      'http://127.0.0.1:PORT/',
      'http://2130706433:PORT/',
      'http://0x7f000001:PORT/',
      'http://0177.0.0.1:PORT/',
      'http://127.1:PORT/',
      'http://127.0.0.1.:PORT/',
      'http://0:PORT/', // 0.0.0.0 reaches the local machine on Linux
      'http://[::1]:PORT/',
      'http://[::ffff:127.0.0.1]:PORT/',
      'http://[::ffff:7f00:1]:PORT/',
    ])('refuses %s before connecting', async (template) => {
      const client = createClient({ allowLoopback: false });
      const error = await refusalOf(client.request(template.replace('PORT', String(site.port))));
      expect(error.code).toBe('blocked_address');
      expect(error.message).toMatch(/^Refused to connect to .+: not a public address$/);
      expect(sockets.destinations).toEqual([]);
      expect(site.requests).toEqual([]);
    });

    it('refuses localhost once resolved', async () => {
      const client = createClient({ allowLoopback: false });
      const error = await refusalOf(client.request(`http://localhost:${site.port}/`));
      expect(error.code).toBe('blocked_address');
      expect(site.requests).toEqual([]);
    });

    it('refuses a hostname resolving to a private address', async () => {
      const lookup = lookupFrom({ 'internal.test': ['10.0.0.5'] });
      const client = createClient({ allowLoopback: false, lookup });
      const error = await refusalOf(client.request(`http://internal.test:${site.port}/`));
      expect(error.code).toBe('blocked_address');
      expect(error.message).toBe('Refused to connect to internal.test (10.0.0.5): not a public address');
      expect(lookup).toHaveBeenCalledTimes(1);
      expect(site.requests).toEqual([]);
    });

    it('refuses a hostname when any one of its addresses is private', async () => {
      const lookup = lookupFrom({ 'mixed.test': ['93.184.215.14', '10.0.0.5'] });
      const client = createClient({ allowLoopback: false, lookup });
      const error = await refusalOf(client.request(`http://mixed.test:${site.port}/`));
      expect(error.code).toBe('blocked_address');
      expect(error.message).toContain('10.0.0.5');
      expect(site.requests).toEqual([]);
    });

    it('refuses the cloud metadata endpoint without opening a socket', async () => {
      const client = createClient({ allowLoopback: false });
      const error = await refusalOf(client.request('http://169.254.169.254/latest/meta-data/'));
      expect(error.code).toBe('blocked_address');
      expect(error.transient).toBe(false);
      expect(sockets.destinations).toEqual([]);
    });
  });

  describe('with loopback access', () => {
    it('returns status, headers and body of a plain GET', async () => {
      const client = createClient({ allowLoopback: true });
      const response = await client.request(`${site.origin}/`, { headers: { 'X-Caller': 'crawler' } });
      expect(response).toMatchObject({ url: `${site.origin}/`, status: 200, redirects: [] });
      expect(response.body.toString()).toBe('<h1>Hello</h1>');
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['x-test']).toBe('yes');
      expect(site.requests[0].headers['user-agent']).toBe(userAgent);
      expect(site.requests[0].headers['x-caller']).toBe('crawler');
    });

    it('returns non-2xx statuses instead of throwing', async () => {
      const client = createClient({ allowLoopback: true });
      const response = await client.request(`${site.origin}/missing`);
      expect(response.status).toBe(404);
      expect(response.body.toString()).toContain('Not found');
    });

    it('follows a redirect and reports the final URL', async () => {
      const client = createClient({ allowLoopback: true });
      const response = await client.request(`${site.origin}/to-root`);
      expect(response).toMatchObject({ url: `${site.origin}/`, status: 200, redirects: [`${site.origin}/`] });
    });

    it('refuses a redirect to the metadata endpoint without sending anything there', async () => {
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(`${site.origin}/to-metadata`));
      expect(error.code).toBe('blocked_address');
      expect(error.message).toBe('Refused to connect to 169.254.169.254: not a public address');
      expect(sockets.destinations.every((host) => host === '127.0.0.1')).toBe(true);
    });

    it('stops a redirect loop', async () => {
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(`${site.origin}/loop`));
      expect(error.code).toBe('too_many_redirects');
      expect(site.requests).toHaveLength(6); // the first request and five redirects
    });

    it('follows at most maxRedirects redirects', async () => {
      const chain = await startLocalSite({
        '/hop-1': sendRedirect('/hop-2'),
        '/hop-2': sendRedirect('/hop-3'),
        '/hop-3': sendRedirect('/hop-4'),
        '/hop-4': sendRedirect('/hop-5'),
        '/hop-5': sendRedirect('/hop-6'),
        '/hop-6': sendRedirect('/end'),
        '/end': sendHtml('end'),
      });
      try {
        const client = createClient({ allowLoopback: true });
        const fiveRedirects = await client.request(`${chain.origin}/hop-2`);
        expect(fiveRedirects.status).toBe(200);
        expect(fiveRedirects.redirects).toHaveLength(5);
        const error = await refusalOf(client.request(`${chain.origin}/hop-1`));
        expect(error.code).toBe('too_many_redirects');
        const withLowerLimit = await refusalOf(client.request(`${chain.origin}/hop-5`, { maxRedirects: 1 }));
        expect(withLowerLimit.code).toBe('too_many_redirects');
      } finally {
        await chain.close();
      }
    });

    it('turns a 303 into a body-less GET and keeps method and body on a 307', async () => {
      const client = createClient({ allowLoopback: true });
      await client.request(`${site.origin}/see-other`, {
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain' },
      });
      await client.request(`${site.origin}/temporary`, {
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain' },
      });
      const echoes = site.requests.filter((request) => request.path === '/echo');
      expect(echoes.map(({ method, body }) => ({ method, body }))).toEqual([
        { method: 'GET', body: '' },
        { method: 'POST', body: 'payload' },
      ]);
      expect(echoes[0].headers['content-type']).toBeUndefined();
    });

    it('refuses a redirect the caller does not accept', async () => {
      const client = createClient({ allowLoopback: true });
      const acceptRedirect = jest.fn(() => false);
      const error = await refusalOf(client.request(`${site.origin}/to-root`, { acceptRedirect }));
      expect(error.code).toBe('redirect_refused');
      expect(acceptRedirect).toHaveBeenCalledWith(new URL(`${site.origin}/to-root`), new URL(`${site.origin}/`));
      expect(site.requests.map((request) => request.path)).toEqual(['/to-root']);
    });

    describe('across origins', () => {
      let other: LocalSite;
      let first: LocalSite;
      beforeEach(async () => {
        other = await startLocalSite({ '*': sendHtml('elsewhere') });
        first = await startLocalSite({
          '/here': sendRedirect('/away'),
          '/away': sendRedirect(`${other.origin}/landing?from=first`),
          '/away-307': sendRedirect(`${other.origin}/landing`, 307),
          '/stay-307': sendRedirect('/echo', 307),
          '/echo': sendHtml('echo'),
        });
      });
      afterEach(async () => {
        await first.close();
        await other.close();
      });
      const ownerHeaders = { 'X-Api-Key': 'k-SECRET', Authorization: 'Bearer SECRET', Cookie: 'session=SECRET' };

      it('drops credential headers at another origin, and keeps the rest, by default', async () => {
        const client = createClient({ allowLoopback: true });
        await client.request(`${first.origin}/away`, { headers: ownerHeaders });
        const [landed] = other.requests;
        expect(landed.headers['x-api-key']).toBe('k-SECRET');
        expect(landed.headers.authorization).toBeUndefined();
        expect(landed.headers.cookie).toBeUndefined();
      });

      it('with confineToOrigin, sends another origin none of the caller’s headers, its own User-Agent only', async () => {
        const client = createClient({ allowLoopback: true });
        const response = await client.request(`${first.origin}/here`, { headers: ownerHeaders, confineToOrigin: true });
        expect(response).toMatchObject({ status: 200, url: `${other.origin}/landing?from=first` });
        // The same origin's hop still had them.
        expect(first.requests.map((request) => request.headers['x-api-key'])).toEqual(['k-SECRET', 'k-SECRET']);
        const [landed] = other.requests;
        expect(landed.path).toBe('/landing?from=first');
        expect(Object.keys(landed.headers).filter((name) => !['host', 'connection'].includes(name))).toEqual([
          'user-agent',
        ]);
        expect(landed.headers['user-agent']).toBe(userAgent);
      });

      it('with confineToOrigin, turns a POST redirected elsewhere by 302 into a bare GET', async () => {
        const client = createClient({ allowLoopback: true });
        await client.request(`${first.origin}/away`, {
          method: 'POST',
          body: '{"token":"SECRET"}',
          headers: { ...ownerHeaders, 'content-type': 'application/json' },
          confineToOrigin: true,
        });
        expect(other.requests.map(({ method, body }) => ({ method, body }))).toEqual([{ method: 'GET', body: '' }]);
        expect(JSON.stringify(other.requests[0].headers)).not.toContain('SECRET');
      });

      it('with confineToOrigin, refuses a 307 that would carry the body to another origin, and follows one within it', async () => {
        const client = createClient({ allowLoopback: true });
        const options = { method: 'POST', body: 'token=SECRET', headers: ownerHeaders, confineToOrigin: true };
        const error = await refusalOf(client.request(`${first.origin}/away-307`, options));
        expect(error.code).toBe('redirect_refused');
        expect(error.message).toBe(
          `Refused to follow the redirect from ${first.origin.slice(7)} to ${other.origin.slice(7)}: it would carry the request body to another origin`,
        );
        expect(other.requests).toEqual([]);
        await client.request(`${first.origin}/stay-307`, options);
        const echoed = first.requests.filter((request) => request.path === '/echo');
        expect(echoed.map(({ method, body }) => ({ method, body }))).toEqual([
          { method: 'POST', body: 'token=SECRET' },
        ]);
        expect(echoed[0].headers['x-api-key']).toBe('k-SECRET');
      });
    });

    describe('error messages', () => {
      // Secrets in the userinfo, the path and the query: an error names the host at most.
      const secretUrl = (origin: string, path: string) =>
        origin.replace('://', '://user:PASSSECRET@') + `${path}/PATHSECRET?token=QUERYSECRET`;
      const closedOrigin = async () => {
        const closed = await startLocalSite();
        await closed.close();
        return closed.origin;
      };

      type Clients = { loopback: OutboundHttpClient; strict: OutboundHttpClient };
      const withSecrets = (path: string) =>
        `${site.origin.replace('://', '://user:PASSSECRET@')}${path}?token=QUERYSECRET`;
      it.each<[string, (clients: Clients) => Promise<unknown>]>([
        ['timeout', ({ loopback }) => loopback.request(withSecrets('/silent'), { timeoutMs: 200 })],
        ['too_large', ({ loopback }) => loopback.request(withSecrets('/PATHSECRET'), { maxBytes: 5 })],
        ['too_many_redirects', ({ loopback }) => loopback.request(withSecrets('/loop'))],
        [
          'redirect_refused',
          ({ loopback }) => loopback.request(withSecrets('/to-root'), { acceptRedirect: () => false }),
        ],
        ['invalid_url', ({ loopback }) => loopback.request(withSecrets('/bad-location'))],
        ['network', async ({ loopback }) => loopback.request(secretUrl(await closedOrigin(), ''))],
        ['tls', ({ loopback }) => loopback.request(withSecrets('/PATHSECRET').replace('http:', 'https:'))],
        ['blocked_address', ({ strict }) => strict.request(withSecrets('/PATHSECRET'))],
        ['invalid_url', ({ loopback }) => loopback.request('http://exa mple.com/PATHSECRET?token=QUERYSECRET')],
        [
          'unsupported_protocol',
          ({ loopback }) => loopback.request('ftp://user:PASSSECRET@127.0.0.1/PATHSECRET?q=QUERYSECRET'),
        ],
      ])('%s names the host at most', async (code, request) => {
        const loopback = createClient({ allowLoopback: true });
        const strict = createClient({ allowLoopback: false });
        const error = await refusalOf(request({ loopback, strict }));
        expect(error.code).toBe(code);
        expect(error.message).not.toMatch(/SECRET|\/silent|\/loop|\/to-root|\/bad-location|\?/);
      });

      it('tells a certificate no one trusts as a TLS failure, naming the host', async () => {
        const secure = await startLocalSite({ '*': sendHtml('secure') }, { tls: SELF_SIGNED });
        try {
          const client = createClient({ allowLoopback: true });
          const error = await refusalOf(client.request(secretUrl(secure.origin, '')));
          expect(error.code).toBe('tls');
          expect(error.transient).toBe(true);
          expect(error.message).toMatch(new RegExp(`^TLS with 127\\.0\\.0\\.1:${secure.port} failed: .*certificate`));
          expect(error.message).not.toMatch(/SECRET/);
          expect(secure.requests).toEqual([]);
        } finally {
          await secure.close();
        }
      });
    });

    it('refuses a body declared larger than maxBytes', async () => {
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(`${site.origin}/large`, { maxBytes: 1000 }));
      expect(error.code).toBe('too_large');
      expect(error.transient).toBe(false);
    });

    it('stops reading an endless body once it exceeds maxBytes', async () => {
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(`${site.origin}/endless`, { maxBytes: 50_000, timeoutMs: 5000 }));
      expect(error.code).toBe('too_large');
      expect(error.message).toBe(`Response from 127.0.0.1:${site.port} is larger than 50000 bytes`);
    });

    it('times out when the server never answers', async () => {
      const client = createClient({ allowLoopback: true });
      const started = Date.now();
      const error = await refusalOf(client.request(`${site.origin}/silent`, { timeoutMs: 200 }));
      expect(error.code).toBe('timeout');
      expect(error.transient).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('times out when the body stalls after the headers', async () => {
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(`${site.origin}/stalling-body`, { timeoutMs: 200 }));
      expect(error.code).toBe('timeout');
    });

    it('rejects with the abort reason when the caller cancels', async () => {
      const client = createClient({ allowLoopback: true });
      const controller = new AbortController();
      const pending = client.request(`${site.origin}/silent`, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('job cancelled')), 20);
      await expect(pending).rejects.toThrow('job cancelled');
    });

    it('reports an unreachable server as a transient network error', async () => {
      const closed = await startLocalSite();
      await closed.close();
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(`${closed.origin}/`));
      expect(error.code).toBe('network');
      expect(error.transient).toBe(true);
      expect(error.message).toContain('ECONNREFUSED');
    });

    it.each([
      ['ftp://127.0.0.1/file', 'unsupported_protocol'],
      ['file:///etc/passwd', 'unsupported_protocol'],
      ['not a url', 'invalid_url'],
      ['http://', 'invalid_url'],
    ])('refuses %s with %s', async (url, code) => {
      const client = createClient({ allowLoopback: true });
      const error = await refusalOf(client.request(url));
      expect(error.code).toBe(code);
      expect(sockets.destinations).toEqual([]);
    });

    it('still refuses other private addresses', async () => {
      const client = createClient({ allowLoopback: true, lookup: lookupFrom({ 'router.test': ['192.168.1.1'] }) });
      expect((await refusalOf(client.request('http://10.0.0.1/'))).code).toBe('blocked_address');
      expect((await refusalOf(client.request('http://router.test/'))).code).toBe('blocked_address');
      expect(sockets.destinations).toEqual(['router.test']);
    });

    it('checks every connection, so a rebound DNS answer is refused', async () => {
      const answers = ['127.0.0.1', '10.0.0.1'];
      const lookup = jest.fn<ReturnType<LookupFunction>, Parameters<LookupFunction>>((_hostname, _options, callback) =>
        callback(null, [{ address: answers.shift() ?? '10.0.0.1', family: 4 }]),
      );
      const client = createClient({ allowLoopback: true, lookup });
      // The redirect closes the connection, so following it needs a new connection and a new lookup.
      const error = await refusalOf(client.request(`http://rebind.test:${site.port}/to-first`));
      expect(error.code).toBe('blocked_address');
      expect(error.message).toBe('Refused to connect to rebind.test (10.0.0.1): not a public address');
      expect(lookup).toHaveBeenCalledTimes(2);
      expect(site.requests.map((request) => request.path)).toEqual(['/to-first']);
    });
  });
});
