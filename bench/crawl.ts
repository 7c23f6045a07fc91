/**
 * Crawl time of a 51-page local site (an index linking to 50 pages, plus robots.txt).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/crawl.ts
 *
 *   direct, delay 0    crawlWebsite() with politenessDelayMs 0, relativeLinksLimit 50; 1 warm-up + 5 runs
 *   direct, delay 500  the same once with politenessDelayMs 500, the production default of CRAWL_DELAY_MS
 *   API, delay 0       a `website` document (relative_links_limit 50) through the real API and worker with
 *                      CRAWL_DELAY_MS=0, create -> active, polled every 10 ms; 1 warm-up + 3 runs
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { crawlWebsite, OutboundHttpClient } from '@app/outbound-http';
import { CRAWLER_USER_AGENT as USER_AGENT } from '../apps/worker/src/documents/crawler-user-agent';
import { TextSource } from './support/pdf-fixtures';
import { fixed, median, nowMs, printTable, runMain, timed } from './support/report';
import { ApiClient, startBenchStack } from './support/stack';

const PAGE_COUNT = 50;
const DIRECT_RUNS = 5;
const API_RUNS = 3;
const PRODUCTION_DELAY_MS = 500;

interface Site {
  origin: string;
  requests: () => number;
  close(): Promise<void>;
}

/** 51 HTML pages of ~2 KB text each, with navigation and a footer the text extraction drops. */
function buildPages(): Map<string, string> {
  const text = new TextSource(7);
  const paragraph = () => Array.from({ length: 5 }, () => text.line(90)).join(' ');
  const layout = (title: string, main: string) =>
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>` +
    `<nav><a href="/">Home</a> <a href="/page/1">First</a></nav><main><h1>${title}</h1>${main}</main>` +
    `<footer>Copyright Bench Site</footer></body></html>`;
  const pages = new Map<string, string>();
  const links = Array.from(
    { length: PAGE_COUNT },
    (_, index) => `<li><a href="/page/${index + 1}">Page ${index + 1}</a></li>`,
  );
  pages.set('/', layout('Bench site', `<p>${paragraph()}</p><ul>${links.join('')}</ul>`));
  for (let number = 1; number <= PAGE_COUNT; number++) {
    const body = Array.from({ length: 4 }, () => `<p>${paragraph()}</p>`).join('');
    pages.set(`/page/${number}`, layout(`Page ${number}`, `${body}<p><a href="/">Back to the index</a></p>`));
  }
  return pages;
}

async function startSite(): Promise<Site> {
  const pages = buildPages();
  let requests = 0;
  const server: Server = createServer((request, response) => {
    requests++;
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    const html = pages.get(path);
    if (html) response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function crawlDirect(client: OutboundHttpClient, site: Site, delayMs: number) {
  const { ms, value } = await timed(() =>
    crawlWebsite({
      client,
      userAgent: USER_AGENT,
      start: { url: `${site.origin}/` },
      relativeLinksLimit: PAGE_COUNT,
      politenessDelayMs: delayMs,
    }),
  );
  return { ms, fetched: value.filter((page) => page.status === 'fetched').length };
}

async function crawlThroughApi(client: ApiClient, site: Site): Promise<{ ms: number; fetched: number }> {
  const knowledgebaseId = await client.createKnowledgebase('Crawl');
  const start = nowMs();
  const created = await client.request<{ data: { id: number } }>(
    'POST',
    `/api/user/knowledgebases/${knowledgebaseId}/documents`,
    { name: 'Bench site', type: 'website', url: `${site.origin}/`, relative_links_limit: PAGE_COUNT },
    201,
  );
  const path = `/api/user/knowledgebases/${knowledgebaseId}/documents/${created.data.id}`;
  for (;;) {
    const { data } = await client.request<{
      data: { status: string; error_message: string | null; pages: { status: string }[] };
    }>('GET', path);
    if (data.status === 'active') {
      return { ms: nowMs() - start, fetched: data.pages.filter((page) => page.status === 'fetched').length };
    }
    if (data.status !== 'processing') throw new Error(`website document ${data.status}: ${data.error_message}`);
    if (nowMs() - start > 120_000) throw new Error('website document still processing after 120 s');
    await sleep(10);
  }
}

async function main(): Promise<void> {
  const site = await startSite();
  const client = new OutboundHttpClient({ allowLoopback: true, userAgent: USER_AGENT });
  const rows: (string | number)[][] = [];
  const addRow = (label: string, runs: { ms: number; fetched: number }[]) => {
    const ms = median(runs.map((run) => run.ms));
    const fetched = runs[0].fetched;
    if (runs.some((run) => run.fetched !== PAGE_COUNT + 1)) {
      throw new Error(`${label}: expected ${PAGE_COUNT + 1} pages, fetched ${runs.map((run) => run.fetched)}`);
    }
    rows.push([label, runs.length, fetched, fixed(ms / 1000, 2), fixed(fetched / (ms / 1000), 1)]);
  };
  try {
    await crawlDirect(client, site, 0); // warm-up
    const direct = [];
    for (let run = 0; run < DIRECT_RUNS; run++) direct.push(await crawlDirect(client, site, 0));
    addRow('crawlWebsite, delay 0 ms', direct);
    addRow(`crawlWebsite, delay ${PRODUCTION_DELAY_MS} ms`, [await crawlDirect(client, site, PRODUCTION_DELAY_MS)]);

    const stack = await startBenchStack({ CRAWL_DELAY_MS: '0' });
    try {
      const api = await ApiClient.register(stack.baseUrl);
      await crawlThroughApi(api, site); // warm-up
      const endToEnd = [];
      for (let run = 0; run < API_RUNS; run++) endToEnd.push(await crawlThroughApi(api, site));
      addRow('API website document, CRAWL_DELAY_MS=0', endToEnd);
    } finally {
      await stack.close();
    }

    printTable(
      `Crawl of a ${PAGE_COUNT + 1}-page local site (index + ${PAGE_COUNT} linked pages, robots.txt)`,
      ['run', 'runs', 'pages', 'median s', 'pages/s'],
      rows,
      [
        `Each crawl sends ${PAGE_COUNT + 2} requests to one host (robots.txt + ${PAGE_COUNT + 1} pages); the politeness ` +
          `delay applies between consecutive requests, so at CRAWL_DELAY_MS=${PRODUCTION_DELAY_MS} it alone costs ` +
          `${PAGE_COUNT + 1} x ${PRODUCTION_DELAY_MS} ms = ${fixed(((PAGE_COUNT + 1) * PRODUCTION_DELAY_MS) / 1000, 1)} s.`,
        `API figure: create request to first poll (every 10 ms) seeing the document active, passages stored.`,
        `Site requests served in total: ${site.requests()}.`,
      ],
    );
  } finally {
    await client.close();
    await site.close();
  }
}

runMain(main);
