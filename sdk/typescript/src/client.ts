import createOpenApiClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/api.js';

/** The generated client: one typed method per HTTP verb, taking the document's paths, parameters and bodies. */
export type VoiceAssistantClient = Client<paths>;

export interface ClientOptions {
  /** Where the API is served, e.g. `http://localhost:3000` (the paths start with `/api`). */
  baseUrl: string;
  /** An API key (`vak_...`) or a session token (`vas_...`), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * How often a request is sent again when sending it again is safe (a read, or a create carrying an
   * `Idempotency-Key`, which the API answers with the first request's answer instead of creating again) and it may
   * now succeed: its answer was lost (a network failure or the timeout), or it was 408, 429, 5xx or, for a keyed
   * create whose first request is still running, 409. Waits as `Retry-After` says (at most 30 s), else backs off
   * exponentially with jitter from half a second. Default 2; 0 turns it off.
   */
  retries?: number;
  /** How long one attempt may take, in milliseconds, before it is abandoned (and retried when it may be). Default 60 000; 0: no limit. */
  timeoutMs?: number;
  /** The fetch to send requests with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_RETRIES = 2;
/** Statuses after which the same request can succeed; 409 only with an `Idempotency-Key` (the first still running). */
const RETRIABLE_STATUSES: ReadonlySet<number> = new Set([408, 429]);
/** Methods that change nothing: sending one twice is as safe as sending it once. */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The longest wait honoured from a Retry-After, so a misconfigured proxy cannot stall a caller for hours. */
const MAX_RETRY_AFTER_MS = 30_000;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/** An attempt took longer than the client's `timeoutMs` (and every retry too, when it was retried). */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} ${url} got no answer within ${timeoutMs} ms`);
  }
}

/**
 * A client of the API. Its methods are openapi-fetch's, typed by the generated `paths`; what the document cannot say
 * is added here: a body with a file (a `Blob` or `File` where the document says `format: binary`) goes as
 * `multipart/form-data`, every other body as JSON; each attempt has a timeout; reads, and creates sent with an
 * `Idempotency-Key`, are retried when that is safe.
 */
export function createClient(options: ClientOptions): VoiceAssistantClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return createOpenApiClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}), ...options.headers },
    bodySerializer: serializeBody,
    fetch: withRetries(withTimeout(send, options.timeoutMs ?? DEFAULT_TIMEOUT_MS), options.retries ?? DEFAULT_RETRIES),
  });
}

/** A fresh key for `params.header['Idempotency-Key']`: keep it to retry the same create later. */
export function idempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** JSON, unless a field holds a file: then every field as a multipart part (a missing or null one left out). */
export function serializeBody(body: unknown): string | FormData {
  if (!body || typeof body !== 'object' || !Object.values(body).some((value) => value instanceof Blob))
    return JSON.stringify(body);
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (value instanceof Blob) form.append(name, value);
    else form.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return form;
}

/**
 * Requests handed on whose answer has not come. A Request passes its signal on through a weak reference (undici's
 * fetch, nodejs/node#55428): one that nothing else holds can be collected while its fetch waits, and then its timeout
 * or its caller's abort never reaches the connection, which waits for an answer for ever.
 */
const underWay = new Set<Request>();

async function sendHeld(send: (request: Request) => Promise<Response>, request: Request): Promise<Response> {
  underWay.add(request);
  try {
    return await send(request);
  } finally {
    underWay.delete(request);
  }
}

/** Each attempt abandoned after `timeoutMs`, as a RequestTimeoutError; the caller's own signal still aborts it. */
function withTimeout(
  send: (request: Request) => Promise<Response>,
  timeoutMs: number,
): (request: Request) => Promise<Response> {
  if (timeoutMs <= 0) return send;
  return async (request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await sendHeld(send, new Request(request, { signal: AbortSignal.any([request.signal, timeout]) }));
    } catch (error) {
      if (timeout.aborted && !request.signal.aborted)
        throw new RequestTimeoutError(request.method, request.url, timeoutMs);
      throw error;
    }
  };
}

function withRetries(
  send: (request: Request) => Promise<Response>,
  retries: number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const keyed = request.headers.has('Idempotency-Key');
    if (retries === 0 || !(keyed || READ_METHODS.has(request.method))) return send(request);
    for (let attempt = 0; ; attempt++) {
      // The body can be read once: each attempt sends a copy.
      const copy = request.clone();
      let response: Response;
      try {
        response = await sendHeld(send, copy);
      } catch (error) {
        // The caller's own abort is an answer, not a failure to retry.
        if (attempt >= retries || request.signal.aborted) throw error;
        await sleep(backoff(attempt));
        continue;
      }
      if (!retriable(response.status, keyed) || attempt >= retries) return response;
      await response.body?.cancel();
      await sleep(retryAfter(response) ?? backoff(attempt));
    }
  };
}

const retriable = (status: number, keyed: boolean) =>
  RETRIABLE_STATUSES.has(status) || status >= 500 || (keyed && status === 409);

/** 0.5 s, 1 s, 2 s, ... up to 8 s, each up to a quarter shorter at random so that many clients do not retry at once. */
const backoff = (attempt: number) =>
  Math.min(FIRST_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS) * (1 - Math.random() / 4);

/** `Retry-After` in seconds or as an HTTP date, capped at MAX_RETRY_AFTER_MS. */
function retryAfter(response: Response): number | undefined {
  const value = response.headers.get('Retry-After')?.trim();
  if (!value) return undefined;
  const milliseconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(milliseconds) ? Math.min(Math.max(milliseconds, 0), MAX_RETRY_AFTER_MS) : undefined;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
