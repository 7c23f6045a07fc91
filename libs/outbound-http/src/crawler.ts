import { setTimeout as sleep } from 'node:timers/promises';
import robotsParser from 'robots-parser';
import { extractLinks, htmlToMainText } from './html-text';
import type { OutboundHttpClient, OutboundResponse } from './outbound-http.client';
import { OutboundRequestError, type OutboundRequestErrorCode } from './outbound-request.error';

/** The kind of failure a page met, for telling failures apart without reading `error`. */
export type CrawlFailure = OutboundRequestErrorCode | 'http_status' | 'robots' | 'content_type';

export interface CrawledPage {
  /** The final URL, after redirects. */
  url: string;
  status: 'fetched' | 'failed' | 'skipped';
  httpStatus?: number;
  title?: string;
  text?: string;
  error?: string;
  /** Set with `error`. */
  failure?: CrawlFailure;
  contentType?: 'html' | 'text';
}

export interface CrawlWebsiteOptions {
  client: OutboundHttpClient;
  /** Matched against robots.txt groups; the client sends its own User-Agent header. */
  userAgent: string;
  /** A start page whose same-site links are followed, or an exact list of pages with no link following. */
  start: { url: string } | { links: string[] };
  /** How many pages beyond the start page may be requested. */
  relativeLinksLimit: number;
  /** Minimum pause between two requests to the same host; robots.txt Crawl-delay may lengthen it. */
  politenessDelayMs?: number;
  maxPageBytes?: number;
  timeoutMs?: number;
  /** Cancelling rejects with the signal's reason. */
  signal?: AbortSignal;
  onPage?: (page: CrawledPage) => void;
}

type RobotsRules = ReturnType<typeof robotsParser>;

const defaultPolitenessDelayMs = 250;
const maxCrawlDelayMs = 10_000;
const maxRobotsBytes = 512 * 1024;
const acceptHeader = 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1';
const htmlMediaTypes = new Set(['text/html', 'application/xhtml+xml']);
// Links to these are files rather than pages; fetching them would only end in "Unsupported content type".
const fileExtensionPattern =
  /\.(pdf|jpe?g|png|gif|webp|avif|svg|ico|bmp|tiff?|zip|gz|tgz|rar|7z|tar|css|js|mjs|json|xml|rss|atom|csv|mp3|mp4|m4a|wav|ogg|webm|avi|mov|mkv|woff2?|ttf|otf|eot|exe|dmg|apk|msi|iso|docx?|xlsx?|pptx?|odt)$/i;

/**
 * Fetches a start page and then its same-site links breadth-first, or an exact list of pages. One bad page never
 * fails the crawl: it becomes a `failed` or `skipped` entry. The only error thrown is a transient
 * OutboundRequestError for the start page (the first link in `links` mode), so the caller's job can retry later.
 */
export async function crawlWebsite(options: CrawlWebsiteOptions): Promise<CrawledPage[]> {
  const crawler = new SiteCrawler(options);
  return 'links' in options.start
    ? crawler.crawlLinks(options.start.links)
    : crawler.crawlFrom(options.start.url, options.relativeLinksLimit);
}

class SiteCrawler {
  private readonly pages: CrawledPage[] = [];
  private readonly robotsByOrigin = new Map<string, Promise<RobotsRules | undefined>>();
  private readonly delayByHost = new Map<string, number>();
  private readonly lastRequestByHost = new Map<string, number>();

  constructor(private readonly options: CrawlWebsiteOptions) {}

  async crawlFrom(startUrl: string, relativeLinksLimit: number): Promise<CrawledPage[]> {
    const start = parsePageUrl(startUrl);
    if (!(start instanceof URL)) return this.report({ url: startUrl, status: 'failed', ...start });

    const queue = [start];
    const seen = new Set([start.href]);
    const fetched = new Set<string>();
    let requests = 0;
    while (queue.length > 0 && requests <= relativeLinksLimit) {
      const url = queue.shift()!;
      if (fetched.has(url.href)) continue; // already reached through a redirect
      const visit = await this.visit(url, start, url === start);
      if (visit.requested) requests++;
      // Two links redirecting to the same page must not yield that page twice.
      if (visit.page.status === 'fetched') {
        if (fetched.has(visit.page.url)) continue;
        fetched.add(visit.page.url);
      }
      seen.add(visit.page.url);
      this.report(visit.page);

      for (const link of visit.links) {
        const linkUrl = new URL(link);
        const isCandidate = isSameSite(linkUrl, start) && !fileExtensionPattern.test(linkUrl.pathname);
        if (isCandidate && !seen.has(linkUrl.href)) {
          seen.add(linkUrl.href);
          queue.push(linkUrl);
        }
      }
    }
    return this.pages;
  }

  async crawlLinks(links: string[]): Promise<CrawledPage[]> {
    const seen = new Set<string>();
    for (const [index, link] of links.entries()) {
      const url = parsePageUrl(link);
      if (!(url instanceof URL)) {
        this.report({ url: link, status: 'failed', ...url });
        continue;
      }
      if (seen.has(url.href)) continue;
      seen.add(url.href);
      this.report((await this.visit(url, url, index === 0)).page);
    }
    return this.pages;
  }

  private report(page: CrawledPage): CrawledPage[] {
    this.pages.push(page);
    this.options.onPage?.(page);
    return this.pages;
  }

  /** Fetches one page, staying on `site` through redirects; throws only for a transient failure of the start page. */
  private async visit(
    url: URL,
    site: URL,
    isStart: boolean,
  ): Promise<{ page: CrawledPage; links: string[]; requested: boolean }> {
    this.options.signal?.throwIfAborted();
    const robots = await this.robotsFor(url);
    if (robots?.isAllowed(url.href, this.options.userAgent) === false) {
      return {
        page: { url: url.href, status: 'skipped', error: 'Disallowed by robots.txt', failure: 'robots' },
        links: [],
        requested: false,
      };
    }

    let response: OutboundResponse;
    try {
      response = await this.request(url.href, {
        maxBytes: this.options.maxPageBytes,
        acceptRedirect: (_from, to) =>
          isSameSite(to, site) && robots?.isAllowed(to.href, this.options.userAgent) !== false,
      });
    } catch (error) {
      if (!(error instanceof OutboundRequestError) || (isStart && error.transient)) throw error;
      return {
        page: { url: url.href, status: 'failed', error: error.message, failure: error.code },
        links: [],
        requested: true,
      };
    }
    return { ...toPage(response), requested: true };
  }

  /** robots.txt, fetched once per origin; missing, broken or unreachable means everything is allowed. */
  private robotsFor(url: URL): Promise<RobotsRules | undefined> {
    let robots = this.robotsByOrigin.get(url.origin);
    if (!robots) {
      robots = this.loadRobots(url);
      this.robotsByOrigin.set(url.origin, robots);
    }
    return robots;
  }

  private async loadRobots(url: URL): Promise<RobotsRules | undefined> {
    const robotsUrl = new URL('/robots.txt', url).href;
    try {
      const response = await this.request(robotsUrl, {
        maxBytes: maxRobotsBytes,
        acceptRedirect: (_from, to) => isSameSite(to, url),
      });
      if (response.status < 200 || response.status >= 300) return undefined;
      const robots = robotsParser(robotsUrl, response.body.toString('utf8'));
      const crawlDelayMs = Math.min((robots.getCrawlDelay(this.options.userAgent) ?? 0) * 1000, maxCrawlDelayMs);
      this.delayByHost.set(url.host, crawlDelayMs);
      return robots;
    } catch (error) {
      if (error instanceof OutboundRequestError) return undefined;
      throw error;
    }
  }

  /** A request through the guarded client, spaced from the previous request to the same host. */
  private async request(
    url: string,
    options: { maxBytes?: number; acceptRedirect: (from: URL, to: URL) => boolean },
  ): Promise<OutboundResponse> {
    const host = new URL(url).host;
    const delayMs = Math.max(
      this.options.politenessDelayMs ?? defaultPolitenessDelayMs,
      this.delayByHost.get(host) ?? 0,
    );
    const waitMs = (this.lastRequestByHost.get(host) ?? -Infinity) + delayMs - Date.now();
    if (waitMs > 0) await pause(waitMs, this.options.signal);
    try {
      return await this.options.client.request(url, {
        ...options,
        headers: { accept: acceptHeader },
        timeoutMs: this.options.timeoutMs,
        signal: this.options.signal,
      });
    } finally {
      this.lastRequestByHost.set(host, Date.now());
    }
  }
}

function toPage(response: OutboundResponse): { page: CrawledPage; links: string[] } {
  const failed = (error: string, failure: CrawlFailure): { page: CrawledPage; links: string[] } => ({
    page: { url: response.url, status: 'failed', httpStatus: response.status, error, failure },
    links: [],
  });
  if (response.status < 200 || response.status >= 300) return failed(`HTTP ${response.status}`, 'http_status');

  const contentType = response.headers['content-type'] ?? '';
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  const isHtml = htmlMediaTypes.has(mediaType) || (mediaType === '' && looksLikeHtml(response.body));
  if (!isHtml && mediaType !== 'text/plain')
    return failed(`Unsupported content type: ${mediaType || 'none given'}`, 'content_type');

  const body = decode(response.body, contentType, isHtml);
  const page: CrawledPage = { url: response.url, status: 'fetched', httpStatus: response.status };
  if (!isHtml) return { page: { ...page, contentType: 'text', text: body.trim() }, links: [] };
  const { title, text } = htmlToMainText(body);
  // The raw HTML is not kept: a crawl holds up to 51 pages of 5 MB, and only the text is needed.
  return { page: { ...page, contentType: 'html', title, text }, links: extractLinks(body, response.url) };
}

/** Decodes by the Content-Type charset, else an HTML <meta> charset, else UTF-8. */
function decode(body: Buffer, contentType: string, isHtml: boolean): string {
  const head = isHtml ? body.subarray(0, 2048).toString('latin1') : '';
  const charset =
    /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body); // an unknown charset label
  }
}

function looksLikeHtml(body: Buffer): boolean {
  return /^\s*<(!doctype html|html|head|body)/i.test(body.subarray(0, 512).toString('latin1'));
}

/** An http(s) URL without its fragment, or the reason it cannot be crawled. */
function parsePageUrl(raw: string): URL | Required<Pick<CrawledPage, 'error' | 'failure'>> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'The URL is not valid', failure: 'invalid_url' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      error: `Unsupported protocol ${url.protocol.slice(0, -1)}: only http and https pages can be crawled`,
      failure: 'unsupported_protocol',
    };
  }
  url.hash = '';
  return url;
}

/** Same host and port, either scheme; "www." is ignored because sites commonly redirect to or from it. */
function isSameSite(url: URL, site: URL): boolean {
  const bareHost = (candidate: URL) => candidate.hostname.replace(/^www\./, '');
  const isWeb = url.protocol === 'http:' || url.protocol === 'https:';
  return isWeb && bareHost(url) === bareHost(site) && url.port === site.port;
}

async function pause(milliseconds: number, signal?: AbortSignal): Promise<void> {
  try {
    await sleep(milliseconds, undefined, { signal });
  } catch (error) {
    throw signal?.reason ?? error;
  }
}
