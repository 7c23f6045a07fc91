/**
 * The one client of the voice assistant service's runtime API (`/api/internal`, described at
 * `/api/internal/docs-json`). The deployment's RUNTIME_API_TOKEN opens a call's session; everything after uses the
 * call token that session hands out, which is good for that call's routes only. Neither token ever appears in an
 * error or a log line: errors name the method, the path and the answer's status.
 */

import type { components } from './generated/runtime-api.js';

// The shapes the service answers and takes, generated from its runtime OpenAPI document (`npm run agent:generate`):
// written once, in the service's DTOs.
type Schemas = components['schemas'];
export type SessionRequest = Schemas['CallSessionRequest'];
export type CallSession = Schemas['CallSession'];
export type SessionAssistant = Schemas['SessionAssistant'];
export type SessionTool = Schemas['SessionTool'];
export type Passage = Schemas['SearchResult'];
export type ToolInvocation = Schemas['ToolInvocation'];
export type CallEvent = Schemas['RuntimeEvent'];
export type EventsReceipt = Schemas['RuntimeEventsReceipt'];
export type CallReport = Schemas['IngestCallRequest'];
export type CallType = SessionRequest['type'];
export type CallStatus = NonNullable<CallReport['status']>;
export type AnsweredBy = NonNullable<CallReport['answered_by']>;
export type EndedReason = NonNullable<CallReport['ended_reason']>;
export type SessionAction = Schemas['SessionAction'];
export type VoicemailSetting = Schemas['VoicemailSettingsResponse'];
/** How a transfer went: `transferred` (the caller is with the person), or why not, in words to say. */
export type TransferResult = Pick<Schemas['CallTransferResponse'], 'status' | 'reason' | 'message'>;
/**
 * The data of a control stream's `control` event (`GET .../control`): the service's `CallControlMessage`. A stream's
 * events are text to OpenAPI, so this one shape is written here.
 */
export interface ControlMessage {
  id: number;
  action: 'hangup' | 'say' | 'instruct';
  text?: string;
  at: string;
}

/** A request the service refused or could not answer; `status` is absent when no answer came at all. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  /**
   * Whether sending the same request again may succeed: no answer, a timeout, a rate limit or a server error. A new
   * call beyond its account's limit of calls in progress (`atCallLimit`) is not: the caller is on the line now.
   */
  get retryable(): boolean {
    if (atCallLimit(this)) return false;
    return this.status === undefined || this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

/**
 * Whether the service refused a new call because its account has as many calls in progress as it may: a 429 that
 * names the limit (`{message, max_concurrent_calls}`), unlike the rate limit's `{message}`.
 */
export function atCallLimit(error: unknown): boolean {
  if (!(error instanceof ServiceError) || error.status !== 429) return false;
  const limit = (error.body as { max_concurrent_calls?: unknown } | undefined)?.max_concurrent_calls;
  return typeof limit === 'number';
}

/**
 * What to say to a caller the owner's ring-time hook refused (the session's 403 `{message, reject: {message}}`): the
 * sentence, or null to hang up without a word; undefined for any other failure.
 */
export function refusalOf(error: unknown): string | null | undefined {
  if (!(error instanceof ServiceError) || error.status !== 403) return undefined;
  const reject = (error.body as { reject?: { message?: unknown } } | undefined)?.reject;
  if (reject === null || typeof reject !== 'object') return undefined;
  return typeof reject.message === 'string' && reject.message.trim() !== '' ? reject.message : null;
}

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** Wait before the second try; doubled before each next one. */
  firstDelayMs: number;
}

export interface ServiceClientOptions {
  /** The service's origin, e.g. https://voice.example.com (the API's `/api` prefix is added here). */
  baseUrl: string;
  /** How a request that is safe to send again is retried: 4 tries, 250 ms apart and doubling, by default. */
  retry?: RetryPolicy;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 4, firstDelayMs: 250 };
/** The longest one request may take, but a tool's invocation. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The service waits for a tool at most 30 s (its longest tool timeout); its answer still has to arrive after. */
const INVOKE_TIMEOUT_MS = 35_000;
/** A transfer waits for the destination to answer (up to the provider's ringing timeout) and the hand-over. */
const TRANSFER_TIMEOUT_MS = 150_000;

/** The routes of one call, with that call's token. */
export class CallClient {
  constructor(
    private readonly http: Http,
    readonly externalId: string,
    private readonly token: string,
  ) {}

  private path(suffix = ''): string {
    return `/internal/calls/${encodeURIComponent(this.externalId)}${suffix}`;
  }

  /** The assistant's knowledgebase searched for `query`, best passages first. */
  async knowledge(query: string, limit: number): Promise<Passage[]> {
    const search = new URLSearchParams({ query, limit: String(limit) });
    const answer = await this.http.send<{ data: Passage[] }>('GET', this.path(`/knowledge?${search}`), this.token);
    return answer.data;
  }

  /**
   * One tool call made by the service. Never retried: the tool's endpoint may have acted on the first request
   * whatever became of its answer, and a second one could act twice.
   */
  async invokeTool(toolId: number, args: Record<string, unknown>): Promise<ToolInvocation> {
    const answer = await this.http.send<{ data: ToolInvocation }>(
      'POST',
      this.path(`/tools/${toolId}/invoke`),
      this.token,
      { arguments: args },
      { retry: { attempts: 1, firstDelayMs: 0 }, timeoutMs: INVOKE_TIMEOUT_MS },
    );
    return answer.data;
  }

  /**
   * Asks the service to transfer the caller to one of the assistant's destinations, by name; answers once the
   * provider is done. Never retried: the first request may have handed the caller over whatever became of its answer.
   * The provider's failure (502) answers as a failed transfer with the service's sentence.
   */
  async transfer(destination: string, summary?: string): Promise<TransferResult> {
    try {
      const answer = await this.http.send<{ data: { transfer: TransferResult } }>(
        'POST',
        this.path('/transfer'),
        this.token,
        { destination, ...(summary ? { summary } : {}) },
        { retry: { attempts: 1, firstDelayMs: 0 }, timeoutMs: TRANSFER_TIMEOUT_MS },
      );
      return answer.data.transfer;
    } catch (error) {
      if (!(error instanceof ServiceError) || error.status !== 502) throw error;
      const message = (error.body as { message?: unknown } | undefined)?.message;
      return { status: 'failed', reason: 'provider-error', message: typeof message === 'string' ? message : null };
    }
  }

  /** Records events; safe to retry, since the service keeps each `seq` once however often it is sent. */
  async recordEvents(events: CallEvent[]): Promise<EventsReceipt> {
    const answer = await this.http.send<{ data: EventsReceipt }>('POST', this.path('/events'), this.token, { events });
    return answer.data;
  }

  /** The final write; repeating the same final write is harmless. */
  async report(report: CallReport): Promise<void> {
    await this.http.send('PUT', this.path(), this.token, report);
  }

  /**
   * Follows the owner's control of the call (`GET .../control`, server-sent events) until the call ends or `signal`
   * aborts: each message once, in the order asked. A dropped stream is opened again with the last message's id
   * (`Last-Event-ID`), so what was asked meanwhile arrives then; the service's `end` event, or its refusal of a call
   * that has ended (401, 404, 409), stops it.
   */
  async followControl(onMessage: (message: ControlMessage) => void, signal: AbortSignal): Promise<void> {
    let lastEventId: string | undefined;
    for (let failures = 0; !signal.aborted;) {
      try {
        const response = await this.http.stream(this.path('/control'), this.token, lastEventId, signal);
        if ([401, 404, 409].includes(response.status)) return;
        if (response.status !== 200 || !response.body) throw new Error(`control stream answered ${response.status}`);
        failures = 0;
        for await (const event of serverSentEvents(response.body)) {
          if (event.event === 'end') return;
          if (event.event !== 'control') continue;
          lastEventId = event.id ?? lastEventId;
          onMessage(JSON.parse(event.data) as ControlMessage);
        }
      } catch {
        if (signal.aborted) return;
        failures++;
      }
      // Again after a pause, longer after each failure in a row (at most 5 s).
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * 2 ** failures)));
    }
  }
}

/** The events of a `text/event-stream` body: comments skipped, fields as the standard reads them. */
async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ id?: string; event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'id') id = value;
        else if (name === 'event') event = value;
        else if (name === 'data') data.push(value);
      }
      if (data.length > 0) yield { id, event, data: data.join('\n') };
    }
  }
}

/** The deployment's client: opens sessions with RUNTIME_API_TOKEN and hands out each call's own client. */
export class ServiceClient {
  private readonly http: Http;

  constructor(
    options: ServiceClientOptions,
    private readonly runtimeToken: string,
  ) {
    this.http = new Http(options);
  }

  /** Finds or creates the call; idempotent on the external id, so it is retried like a read. */
  async openSession(externalId: string, request: SessionRequest): Promise<CallSession> {
    const path = `/internal/calls/${encodeURIComponent(externalId)}/session`;
    return (await this.http.send<{ data: CallSession }>('POST', path, this.runtimeToken, request)).data;
  }

  /**
   * Tells the service the person of the call's warm transfer has been briefed, so it joins them to the caller. Posting
   * twice is harmless, so it is retried like a read.
   */
  async transferBriefed(externalId: string): Promise<void> {
    await this.http.send(
      'POST',
      `/internal/calls/${encodeURIComponent(externalId)}/transfer/briefed`,
      this.runtimeToken,
    );
  }

  forCall(session: CallSession): CallClient {
    return new CallClient(this.http, session.call.external_id, session.token);
  }
}

class Http {
  private readonly baseUrl: string;
  private readonly retry: RetryPolicy;

  constructor(options: ServiceClientOptions) {
    this.baseUrl = `${options.baseUrl.replace(/\/+$/, '')}/api`;
    this.retry = options.retry ?? DEFAULT_RETRY;
  }

  async send<T = unknown>(
    method: string,
    path: string,
    token: string,
    body?: unknown,
    { retry = this.retry, timeoutMs = REQUEST_TIMEOUT_MS }: { retry?: RetryPolicy; timeoutMs?: number } = {},
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.once(method, path, token, body, timeoutMs)) as T;
      } catch (error) {
        if (!(error instanceof ServiceError) || !error.retryable || attempt >= retry.attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, retry.firstDelayMs * 2 ** (attempt - 1)));
      }
    }
  }

  /** Opens a stream of server-sent events; the caller reads (and so owns) the answer's body. */
  stream(path: string, token: string, lastEventId: string | undefined, signal: AbortSignal): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'text/event-stream',
        ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      },
      signal,
    });
  }

  private async once(method: string, path: string, token: string, body: unknown, timeoutMs: number): Promise<unknown> {
    const what = `${method} ${path.split('?')[0]}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      // Refused, reset, timed out, or cut off mid-answer: whether the service acted is unknown.
      const code = (error as { cause?: { code?: string } }).cause?.code;
      throw new ServiceError(`${what}: no answer (${(error as Error).message}${code ? `: ${code}` : ''})`);
    }
    const parsed = parseJson(text);
    if (!response.ok) {
      const message = (parsed as { message?: unknown } | undefined)?.message;
      throw new ServiceError(
        `${what} answered ${response.status}${typeof message === 'string' ? `: ${message}` : ''}`,
        response.status,
        parsed,
      );
    }
    return parsed;
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
