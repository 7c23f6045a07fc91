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
  /**
   * What the caller sends is for the first URL's origin alone (a tool's secret headers and fields): at a redirect to
   * another origin every header it set is dropped (the client's User-Agent stays), and a redirect that would carry
   * the body there (307, 308) is refused (`redirect_refused`). Without it only credential headers are dropped there.
   */
  confineToOrigin?: boolean;
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
 * (a second, rebound DNS answer cannot slip through). Its errors name the host at most: a URL's path, query and
 * userinfo may hold a caller's secrets, and the messages reach owners, logs and a voice runtime's model.
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
    const first = current;

    // One controller for both the deadline and the caller's cancellation, so undici sees a single signal.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const cancel = () => controller.abort();
    options.signal?.addEventListener('abort', cancel, { once: true });
    if (options.signal?.aborted) controller.abort();

    let method = (options.method ?? 'GET').toUpperCase();
    let body = options.body;
    const ownHeaders = { 'user-agent': this.options.userAgent };
    let headers: Record<string, string> = { ...ownHeaders, ...lowerCaseKeys(options.headers) };
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
          throw new OutboundRequestError(
            'too_many_redirects',
            `Stopped after ${maxRedirects} redirects from ${first.host}`,
          );
        }
        const next = this.checkUrl(location, current);
        const refuse = (why = '') =>
          new OutboundRequestError(
            'redirect_refused',
            `Refused to follow the redirect from ${current.host} to ${next.host}${why}`,
          );
        if (options.acceptRedirect && !options.acceptRedirect(current, next)) throw refuse();
        // Browsers turn these into a body-less GET; 307 and 308 exist precisely to keep method and body.
        if (response.statusCode <= 303 && method !== 'HEAD') {
          method = 'GET';
          body = undefined;
          headers = withoutKeys(headers, ['content-type', 'content-length']);
        }
        if (options.confineToOrigin && next.origin !== first.origin) {
          if (body !== undefined) throw refuse(': it would carry the request body to another origin');
          headers = ownHeaders;
        }
        if (next.origin !== current.origin) headers = withoutKeys(headers, credentialHeaders);
        redirects.push(next.href);
        current = next;
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (controller.signal.aborted) {
        throw new OutboundRequestError('timeout', `No answer from ${current.host} within ${timeoutMs} ms`, {
          timeoutMs,
        });
      }
      if (error instanceof OutboundRequestError) throw error;
      throw connectionError(current, error);
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
      throw new OutboundRequestError(
        'invalid_url',
        base ? `${base.host} redirected to an invalid URL` : 'The URL is not valid',
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      const from = base ? ` (a redirect from ${base.host})` : '';
      throw new OutboundRequestError(
        'unsupported_protocol',
        `Unsupported protocol ${url.protocol.slice(0, 32)}${from}: only http and https are allowed`,
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
  // Made only when thrown: an error's stack costs more than reading a small answer.
  const tooLarge = () =>
    new OutboundRequestError('too_large', `Response from ${url.host} is larger than ${maxBytes} bytes`);
  if (!truncate && Number(response.headers['content-length']) > maxBytes) {
    // Destroying an unread body reports an abort error nobody is listening for; that is expected here.
    response.body.on('error', () => undefined).destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop by throwing destroys the stream, so nothing past the limit is ever buffered.
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    if (size + chunk.length > maxBytes) {
      if (!truncate) throw tooLarge();
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

/** Node's and undici's codes for a connection that failed, in words; anything else is named by its code alone. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled',
};
/** OpenSSL's verification codes as Node names them, and Node's own TLS codes. */
const TLS_CODE =
  /^(ERR_SSL_|ERR_TLS_)|CERT|CRL|^UNABLE_TO_|^(INVALID_CA|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE|HOSTNAME_MISMATCH)$/;
const CERTIFICATE_REASONS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'its certificate has expired',
  CERT_NOT_YET_VALID: 'its certificate is not valid yet',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate is not from a trusted authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate is not from a trusted authority',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is for another name',
};

/**
 * A failed connection, from the error's code alone: the messages of Node and undici are not written for a caller and
 * may quote what was sent. A TLS handshake or certificate failure is told apart (`tls`).
 */
function connectionError(url: URL, error: unknown): OutboundRequestError {
  const code = errorCode(error);
  if (code !== undefined && TLS_CODE.test(code)) {
    const reason =
      CERTIFICATE_REASONS[code] ?? (/CERT/.test(code) ? 'its certificate was refused' : 'handshake failed');
    return new OutboundRequestError('tls', `TLS with ${url.host} failed: ${reason} (${code})`, { cause: error });
  }
  const reason = code === undefined ? 'network error' : `${NETWORK_REASONS[code] ?? 'network error'} (${code})`;
  return new OutboundRequestError('network', `Could not reach ${url.host}: ${reason}`, { cause: error });
}

/** The error's code, or its cause's: a constant's name, never free text. */
function errorCode(error: unknown): string | undefined {
  // Duck-typed: errors made in another realm (Node's, under Jest's sandbox) are not `instanceof Error` here.
  let current = error as { code?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 3; depth++) {
    if (typeof current.code === 'string' && /^[A-Z][A-Z0-9_]{1,63}$/.test(current.code)) return current.code;
    current = current.cause as typeof current;
  }
  return undefined;
}
