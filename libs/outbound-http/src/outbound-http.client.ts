import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction as SocketLookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { isAllowedAddress } from './address-policy';
import { OutboundRequestError } from './outbound-request.error';

/** The `all: true` shape of `dns.lookup`; injectable so tests can simulate any DNS answer without real DNS. */
export type LookupFunction = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface OutboundHttpClientOptions {
  /** Lets tests and local development reach 127.0.0.0/8 and ::1; every other private range stays refused. */
  allowLoopback: boolean;
  userAgent: string;
  lookup?: LookupFunction;
}

export interface OutboundRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Covers the whole call: every redirect hop and reading the body. */
  timeoutMs?: number;
  /** The body is streamed and the request aborted as soon as it grows past this. */
  maxBytes?: number;
  /** Past `maxBytes`, keep the first `maxBytes` and stop reading (`truncated: true`) instead of failing. */
  truncateBody?: boolean;
  maxRedirects?: number;
  /** Caller policy on top of the address policy, e.g. "same host only". */
  acceptRedirect?: (from: URL, to: URL) => boolean;
  /** Cancelling rejects with the signal's reason, not an OutboundRequestError. */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** True when the body was cut at `maxBytes` (only with `truncateBody`). */
  truncated: boolean;
  /** Every URL redirected to, in order. */
  redirects: string[];
}

const defaultTimeoutMs = 10_000;
const defaultMaxBytes = 5 * 1024 * 1024;
const defaultMaxRedirects = 5;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);
// Not to be replayed to a different origin than the one the caller meant them for.
const credentialHeaders = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * The one way to send HTTP to a user-supplied URL. Every hop is checked against the address policy: IP literals
 * before connecting, hostnames inside the agent's DNS lookup, so the address checked is the address connected to
 * (a second, rebound DNS answer cannot slip through).
 */
export class OutboundHttpClient {
  private readonly agent: Agent;

  constructor(private readonly options: OutboundHttpClientOptions) {
    this.agent = new Agent({ connect: { lookup: this.checkedLookup } });
  }

  async request(url: string, options: OutboundRequestOptions = {}): Promise<OutboundResponse> {
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    const maxBytes = options.maxBytes ?? defaultMaxBytes;
    const maxRedirects = options.maxRedirects ?? defaultMaxRedirects;

    let current = this.checkUrl(url);

    // One controller for both the deadline and the caller's cancellation, so undici sees a single signal.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const cancel = () => controller.abort();
    options.signal?.addEventListener('abort', cancel, { once: true });
    if (options.signal?.aborted) controller.abort();

    let method = (options.method ?? 'GET').toUpperCase();
    let body = options.body;
    let headers: Record<string, string> = { 'user-agent': this.options.userAgent, ...lowerCaseKeys(options.headers) };
    const redirects: string[] = [];
    try {
      for (;;) {
        const response = await this.agent.request({
          origin: current.origin,
          path: current.pathname + current.search,
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          signal: controller.signal,
        });
        const location = response.headers.location;
        if (!redirectStatuses.has(response.statusCode) || typeof location !== 'string') {
          const read = await readLimited(response, maxBytes, current, options.truncateBody ?? false);
          return {
            url: current.href,
            status: response.statusCode,
            headers: flattenHeaders(response.headers),
            body: read.body,
            truncated: read.truncated,
            redirects,
          };
        }

        await response.body.dump();
        if (redirects.length >= maxRedirects) {
          throw new OutboundRequestError('too_many_redirects', `Stopped after ${maxRedirects} redirects from ${url}`);
        }
        const next = this.checkUrl(location, current);
        if (options.acceptRedirect && !options.acceptRedirect(current, next)) {
          throw new OutboundRequestError(
            'redirect_refused',
            `Refused to follow the redirect from ${current.href} to ${next.href}`,
          );
        }
        // Browsers turn these into a body-less GET; 307 and 308 exist precisely to keep method and body.
        if (response.statusCode <= 303 && method !== 'HEAD') {
          method = 'GET';
          body = undefined;
          headers = withoutKeys(headers, ['content-type', 'content-length']);
        }
        if (next.origin !== current.origin) headers = withoutKeys(headers, credentialHeaders);
        redirects.push(next.href);
        current = next;
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (controller.signal.aborted) {
        throw new OutboundRequestError('timeout', `Request to ${current.href} timed out after ${timeoutMs} ms`, {
          timeoutMs,
        });
      }
      if (error instanceof OutboundRequestError) throw error;
      throw new OutboundRequestError('network', `Could not reach ${current.host}: ${describe(error)}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', cancel);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Parses (the WHATWG parser normalises decimal, hex and octal IPv4 forms) and refuses what must never be dialled. */
  private checkUrl(raw: string, base?: URL): URL {
    let url: URL;
    try {
      url = new URL(raw, base);
    } catch {
      throw new OutboundRequestError('invalid_url', `Invalid URL: ${raw}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundRequestError(
        'unsupported_protocol',
        `Unsupported protocol ${url.protocol} in ${url.href}: only http and https are allowed`,
      );
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // Literals never reach the DNS lookup below, so they are checked here.
    if (isIP(host) !== 0 && !isAllowedAddress(host, this.options)) {
      throw new OutboundRequestError('blocked_address', `Refused to connect to ${host}: not a public address`);
    }
    return url;
  }

  /** Resolves every address and refuses the connection if any of them is not allowed. */
  private readonly checkedLookup: SocketLookupFunction = (hostname, options, callback) => {
    const resolve: LookupFunction = this.options.lookup ?? dnsLookup;
    resolve(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses) => {
      if (error) return callback(error, '');
      if (addresses.length === 0) {
        return callback(new OutboundRequestError('network', `No address found for ${hostname}`), '');
      }
      const refused = addresses.find((address) => !isAllowedAddress(address.address, this.options));
      if (refused) {
        const message = `Refused to connect to ${hostname} (${refused.address}): not a public address`;
        return callback(new OutboundRequestError('blocked_address', message), '');
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

async function readLimited(
  response: Dispatcher.ResponseData,
  maxBytes: number,
  url: URL,
  truncate: boolean,
): Promise<{ body: Buffer; truncated: boolean }> {
  const tooLarge = new OutboundRequestError('too_large', `Response from ${url.href} is larger than ${maxBytes} bytes`);
  if (!truncate && Number(response.headers['content-length']) > maxBytes) {
    // Destroying an unread body reports an abort error nobody is listening for; that is expected here.
    response.body.on('error', () => undefined).destroy();
    throw tooLarge;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop by throwing destroys the stream, so nothing past the limit is ever buffered.
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    if (size + chunk.length > maxBytes) {
      if (!truncate) throw tooLarge;
      chunks.push(chunk.subarray(0, maxBytes - size));
      // Leaving the loop destroys the stream: the rest is never read.
      return { body: Buffer.concat(chunks, maxBytes), truncated: true };
    }
    size += chunk.length;
    chunks.push(chunk);
  }
  return { body: Buffer.concat(chunks, size), truncated: false };
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function lowerCaseKeys(headers: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function withoutKeys(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return error.message + cause;
}
