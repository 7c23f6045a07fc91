import type { LookupAddress } from 'node:dns';
import { crawlWebsite, type CrawledPage, type CrawlWebsiteOptions } from './crawler';
import { OutboundHttpClient, type LookupFunction } from './outbound-http.client';
import { OutboundRequestError } from './outbound-request.error';
import { sendHtml, sendRedirect, startLocalSite, type LocalSite, type RouteHandler } from '../test/local-site';
import { restrictSocketsToLoopback } from '../test/loopback-only-sockets';

const userAgent = 'TestBot';

/** An HTML page linking to each of `hrefs`. */
function linkingPage(hrefs: string[]): RouteHandler {
  return sendHtml(`<html><body>${hrefs.map((href) => `<a href="${href}">${href}</a>`).join(' ')}</body></html>`);
}

function send(status: number, contentType: string, body: string | Buffer): RouteHandler {
  return (_request, response) => response.writeHead(status, { 'content-type': contentType }).end(body);
}

describe('crawlWebsite', () => {
  let site: LocalSite | undefined;
  let client: OutboundHttpClient;
  let sockets: ReturnType<typeof restrictSocketsToLoopback>;
  // The site is reached as site.test so that the lookup shows every host the crawler tried to reach.
  const lookup = jest.fn<ReturnType<LookupFunction>, Parameters<LookupFunction>>((hostname, _options, callback) => {
    if (hostname !== 'site.test')
      return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, [{ address: '127.0.0.1', family: 4 } satisfies LookupAddress]);
  });

  const startSite = async (routes: Record<string, RouteHandler>) => {
    site = await startLocalSite(routes);
    return { origin: `http://site.test:${site.port}`, site };
  };
  const paths = () => site!.requests.map((request) => request.path);
  const crawl = (options: Partial<CrawlWebsiteOptions> & Pick<CrawlWebsiteOptions, 'start'>) =>
    crawlWebsite({ client, userAgent, relativeLinksLimit: 20, politenessDelayMs: 0, ...options });
  const summary = (pages: CrawledPage[], origin: string) =>
    pages.map(({ url, status, error }) => ({ path: url.replace(origin, ''), status, ...(error ? { error } : {}) }));

  beforeEach(() => {
    sockets = restrictSocketsToLoopback();
    lookup.mockClear();
    client = new OutboundHttpClient({ allowLoopback: true, userAgent, lookup });
  });

  afterEach(async () => {
    await client.close();
    await site?.close();
    site = undefined;
    sockets.restore();
  });

  it('follows same-site links breadth-first, once each, and nothing else', async () => {
    const { origin } = await startSite({
      '/': linkingPage([
        'docs/intro',
        '/about#team',
        '/about',
        '#top',
        '/',
        '/guide/',
        'http://example.invalid/',
        '//other.test/protocol-relative',
        'mailto:someone@example.com',
        'tel:+123',
        'javascript:void(0)',
        '/logo.png',
        '/brochure.pdf',
      ]),
      '/docs/intro': linkingPage(['../contact']),
      '/guide/': sendHtml('<html><head><base href="/manual/"></head><body><a href="chapter-1">One</a></body></html>'),
      '/about': sendHtml('<p>About</p>'),
      '/contact': sendHtml('<p>Contact</p>'),
      '/manual/chapter-1': sendHtml('<p>Chapter</p>'),
    });
    const reported: string[] = [];

    const pages = await crawl({ start: { url: `${origin}/` }, onPage: (page) => reported.push(page.url) });

    const expected = ['/', '/docs/intro', '/about', '/guide/', '/contact', '/manual/chapter-1'];
    expect(pages.map((page) => page.url)).toEqual(expected.map((path) => origin + path));
    expect(pages.every((page) => page.status === 'fetched')).toBe(true);
    expect(reported).toEqual(pages.map((page) => page.url));
    expect(paths()).toEqual(['/robots.txt', ...expected]);
    expect(new Set(lookup.mock.calls.map(([hostname]) => hostname))).toEqual(new Set(['site.test']));
    expect(new Set(sockets.destinations)).toEqual(new Set(['site.test']));
  });

  it('extracts the main text and title but not navigation, footer or scripts', async () => {
    const { origin } = await startSite({
      '/': sendHtml(`<html><head><title>Acme Plumbing</title><script>var tracking = 'script text';</script></head><body>
        <nav><a href="/">Navigation text</a></nav>
        <main><h1>Emergency repairs</h1><p>We answer the phone around the clock.</p></main>
        <footer>Footer text</footer></body></html>`),
    });

    const [page] = await crawl({ start: { url: `${origin}/` } });

    expect(page).toMatchObject({ status: 'fetched', httpStatus: 200, contentType: 'html', title: 'Acme Plumbing' });
    expect(page.text).toBe('Emergency repairs\n\nWe answer the phone around the clock.');
  });

  it('stops after the start page plus relativeLinksLimit further pages', async () => {
    const linked = Array.from({ length: 10 }, (_, index) => `/page-${index + 1}`);
    const { origin } = await startSite({
      '/': linkingPage(linked),
      ...Object.fromEntries(linked.map((path) => [path, sendHtml(`<p>${path}</p>`)])),
    });

    const pages = await crawl({ start: { url: `${origin}/` }, relativeLinksLimit: 3 });

    expect(pages.map((page) => page.url)).toEqual(['/', '/page-1', '/page-2', '/page-3'].map((path) => origin + path));
    expect(paths()).toEqual(['/robots.txt', '/', '/page-1', '/page-2', '/page-3']);
  });

  it('skips pages robots.txt disallows without requesting them', async () => {
    const { origin } = await startSite({
      // The OtherBot group does not apply to TestBot, which falls back to the * group.
      '/robots.txt': send(
        200,
        'text/plain',
        'User-agent: OtherBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n',
      ),
      '/': linkingPage(['/private/secret', '/public']),
      '/public': sendHtml('<p>Public</p>'),
    });

    const pages = await crawl({ start: { url: `${origin}/` } });

    expect(summary(pages, origin)).toEqual([
      { path: '/', status: 'fetched' },
      { path: '/private/secret', status: 'skipped', error: 'Disallowed by robots.txt' },
      { path: '/public', status: 'fetched' },
    ]);
    expect(paths()).toEqual(['/robots.txt', '/', '/public']);
  });

  it('records failing pages and carries on', async () => {
    const { origin } = await startSite({
      '/': linkingPage(['/loop', '/missing', '/huge', '/image', '/leaves-site', '/moved', '/ok']),
      '/loop': sendRedirect('/loop'),
      '/huge': sendHtml(`<p>${'x'.repeat(5000)}</p>`),
      '/image': send(200, 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])),
      '/leaves-site': sendRedirect('http://example.invalid/'),
      '/moved': sendRedirect('/ok', 301),
      '/ok': sendHtml('<p>Fine</p>'),
    });

    const pages = await crawl({ start: { url: `${origin}/` }, maxPageBytes: 1000 });
    const host = new URL(origin).host;

    expect(summary(pages, origin)).toEqual([
      { path: '/', status: 'fetched' },
      { path: '/loop', status: 'failed', error: `Stopped after 5 redirects from ${host}` },
      { path: '/missing', status: 'failed', error: 'HTTP 404' },
      { path: '/huge', status: 'failed', error: `Response from ${host} is larger than 1000 bytes` },
      { path: '/image', status: 'failed', error: 'Unsupported content type: image/png' },
      {
        path: '/leaves-site',
        status: 'failed',
        error: `Refused to follow the redirect from ${host} to example.invalid`,
      },
      { path: '/ok', status: 'fetched' }, // reached through /moved; the link to /ok itself is not fetched again
    ]);
    expect(pages[2].httpStatus).toBe(404);
    // Each failure's kind, to tell them apart without reading the message.
    expect(pages.map((page) => page.failure)).toEqual([
      undefined,
      'too_many_redirects',
      'http_status',
      'too_large',
      'content_type',
      'redirect_refused',
      undefined,
    ]);
    expect(paths().filter((path) => path === '/ok')).toHaveLength(1);
    expect(lookup.mock.calls.every(([hostname]) => hostname === 'site.test')).toBe(true);
  });

  it('fetches exactly the given links in links mode', async () => {
    const { origin } = await startSite({
      '/a': linkingPage(['/c']),
      '/b': send(200, 'text/plain; charset=utf-8', '  Plain text page\n'),
      '/c': sendHtml('<p>Not wanted</p>'),
    });

    const pages = await crawl({
      start: { links: [`${origin}/a`, `${origin}/b`, `${origin}/a#again`, 'ftp://site.test/file'] },
    });

    expect(summary(pages, origin)).toEqual([
      { path: '/a', status: 'fetched' },
      { path: '/b', status: 'fetched' },
      {
        path: 'ftp://site.test/file',
        status: 'failed',
        error: 'Unsupported protocol ftp: only http and https pages can be crawled',
      },
    ]);
    expect(pages[1]).toMatchObject({ contentType: 'text', text: 'Plain text page' });
    expect(paths()).toEqual(['/robots.txt', '/a', '/b']);
  });

  it('decodes the body using the charset of the response', async () => {
    const { origin } = await startSite({
      '/': send(200, 'text/html; charset=iso-8859-1', Buffer.from('<p>Caf\u00e9 cr\u00e8me</p>', 'latin1')),
      '/meta': send(200, 'text/html', Buffer.from('<meta charset="windows-1252"><p>\u00fcber</p>', 'latin1')),
    });

    const pages = await crawl({ start: { links: [`${origin}/`, `${origin}/meta`] } });

    expect(pages.map((page) => page.text)).toEqual(['Caf\u00e9 cr\u00e8me', '\u00fcber']);
  });

  it('waits the politeness delay between requests to the same host', async () => {
    const { origin } = await startSite({
      '/': linkingPage(['/one', '/two']),
      '/one': sendHtml('1'),
      '/two': sendHtml('2'),
    });

    await crawl({ start: { url: `${origin}/` }, politenessDelayMs: 100 });

    const times = site!.requests.map((request) => request.receivedAt);
    expect(times).toHaveLength(4);
    for (let index = 1; index < times.length; index++)
      expect(times[index] - times[index - 1]).toBeGreaterThanOrEqual(95);
  });

  it('honours a robots.txt Crawl-delay longer than the politeness delay', async () => {
    const { origin } = await startSite({
      '/robots.txt': send(200, 'text/plain', 'User-agent: *\nCrawl-delay: 0.2\n'),
      '/': linkingPage(['/one']),
      '/one': sendHtml('1'),
    });

    await crawl({ start: { url: `${origin}/` } });

    const [, start, one] = site!.requests.map((request) => request.receivedAt);
    expect(one - start).toBeGreaterThanOrEqual(195);
  });

  it('throws a transient error when the start page cannot be reached, so the job can retry', async () => {
    const closed = await startLocalSite();
    await closed.close();

    const failure = crawl({ start: { url: `http://site.test:${closed.port}/` } });

    await expect(failure).rejects.toBeInstanceOf(OutboundRequestError);
    await expect(failure).rejects.toMatchObject({ code: 'network', transient: true });
  });

  it('reports a permanently failing start page instead of throwing', async () => {
    const { origin } = await startSite({});
    const blockingClient = new OutboundHttpClient({ allowLoopback: false, userAgent });
    try {
      expect(summary(await crawl({ start: { url: `${origin}/` } }), origin)).toEqual([
        { path: '/', status: 'failed', error: 'HTTP 404' },
      ]);
      const blocked = await crawl({ client: blockingClient, start: { url: 'http://127.0.0.1/' } });
      expect(blocked).toEqual([
        {
          url: 'http://127.0.0.1/',
          status: 'failed',
          error: 'Refused to connect to 127.0.0.1: not a public address',
          failure: 'blocked_address',
        },
      ]);
      expect(await crawl({ start: { url: 'not a url' } })).toEqual([
        { url: 'not a url', status: 'failed', error: 'The URL is not valid', failure: 'invalid_url' },
      ]);
    } finally {
      await blockingClient.close();
    }
  });

  it('stops when cancelled', async () => {
    const { origin } = await startSite({
      '/': linkingPage(['/one', '/two']),
      '/one': sendHtml('1'),
      '/two': sendHtml('2'),
    });
    const controller = new AbortController();

    const crawling = crawl({
      start: { url: `${origin}/` },
      signal: controller.signal,
      onPage: () => controller.abort(new Error('cancelled')),
    });

    await expect(crawling).rejects.toThrow('cancelled');
    expect(paths()).toEqual(['/robots.txt', '/']);
  });
});
