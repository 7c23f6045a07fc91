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
   * How often a request carrying an `Idempotency-Key` is sent again when its answer is lost (a network failure), the
   * first request with the key is still running (409), or the API asks to retry later (429, 503). The API answers a
   * retry with the first request's answer instead of creating again. Default 2; 0 turns it off.
   */
  retries?: number;
  /** The fetch to send requests with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Statuses after which the same request, with the same key, can succeed. */
const RETRIABLE_STATUSES: ReadonlySet<number> = new Set([409, 429, 503]);
/** The longest wait honoured from a Retry-After, so a misconfigured proxy cannot stall a caller for hours. */
const MAX_RETRY_AFTER_MS = 30_000;

/**
 * A client of the API. Its methods are openapi-fetch's, typed by the generated `paths`; what the document cannot say
 * is added here: a body with a file (a `Blob` or `File` where the document says `format: binary`) goes as
 * `multipart/form-data`, every other body as JSON; a create sent with an `Idempotency-Key` is retried safely.
 */
export function createClient(options: ClientOptions): VoiceAssistantClient {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return createOpenApiClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}), ...options.headers },
    bodySerializer: serializeBody,
    fetch: withIdempotentRetries(send, options.retries ?? 2),
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

function withIdempotentRetries(
  send: (request: Request) => Promise<Response>,
  retries: number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    if (retries === 0 || !request.headers.has('Idempotency-Key')) return send(request);
    for (let attempt = 0; ; attempt++) {
      // The body can be read once: each attempt sends a copy.
      const copy = request.clone();
      let response: Response;
      try {
        response = await send(copy);
      } catch (error) {
        if (attempt >= retries) throw error;
        await sleep(backoff(attempt));
        continue;
      }
      if (!RETRIABLE_STATUSES.has(response.status) || attempt >= retries) return response;
      await response.body?.cancel();
      await sleep(retryAfter(response) ?? backoff(attempt));
    }
  };
}

const backoff = (attempt: number) => 250 * 2 ** attempt;

function retryAfter(response: Response): number | undefined {
  const seconds = Number(response.headers.get('Retry-After'));
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : undefined;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
