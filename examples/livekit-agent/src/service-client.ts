/**
 * The one client of the voice assistant service's runtime API (`/api/internal`, described at
 * `/api/internal/docs-json`). The deployment's RUNTIME_API_TOKEN opens a call's session; everything after uses the
 * call token that session hands out, which is good for that call's routes only. Neither token ever appears in an
 * error or a log line: errors name the method, the path and the answer's status.
 */

export type CallType = 'inbound' | 'outbound' | 'web';
export type AnsweredBy = 'human' | 'machine' | 'unknown';
export type CallStatus =
  'in-progress' | 'completed' | 'ended' | 'ended_by_customer' | 'ended_by_assistant' | 'busy' | 'no-answer' | 'failed';

export interface SessionRequest {
  type: CallType;
  client_phone_number: string;
  assistant_phone_number: string;
  assistant_id?: number;
  campaign_id?: number;
  lead_id?: number;
  variables?: Record<string, unknown>;
}

export interface Language {
  id: number;
  name: string;
  iso_2: string;
}

export interface SessionAssistant {
  id: number;
  name: string;
  type: string;
  language: Language;
  secondary_languages: Language[];
  voice_id: string | null;
  timezone: string;
  initial_message: string | null;
  system_prompt: string | null;
  /** Seconds. */
  max_duration: number;
  record: boolean;
  variables: Record<string, unknown>;
  post_call_schema: { name: string; type: string; description: string }[];
}

export interface SessionTool {
  id: number;
  name: string;
  description: string;
  /** JSON Schema of the arguments: what the invoke route checks them against. */
  parameters: Record<string, unknown>;
}

/** A built-in action the session offers beside the tools: done through the service, or (DTMF) in the room. */
export interface SessionAction {
  name: string;
  type: 'transfer_call' | 'end_call' | 'send_dtmf';
  description: string;
  parameters: Record<string, unknown>;
  /** `transfer_call`: where the call may go, by name (the numbers stay with the service). */
  destinations?: { name: string; description: string; mode: 'cold' | 'warm'; message: string | null }[];
  /** `end_call`: the goodbye. */
  message?: string | null;
}

/** What to do when a machine answers. */
export interface VoicemailSetting {
  action: 'hangup' | 'leave_message';
  message: string | null;
}

/** How a transfer went: `transferred` (the caller is with the person), or why not, in words to say. */
export interface TransferResult {
  status: 'transferred' | 'failed' | 'declined';
  reason: string | null;
  message: string | null;
}

export interface CallSession {
  call: {
    id: number;
    external_id: string;
    type: CallType;
    client_phone_number: string;
    assistant_phone_number: string;
    lead_id: number | null;
    status: string;
  };
  token: string;
  expires_at: string;
  assistant: SessionAssistant;
  tools: SessionTool[];
  actions: SessionAction[];
  end_call: { enabled: boolean; message: string | null };
  voicemail: VoicemailSetting;
  knowledgebase: { id: number; name: string } | null;
}

export interface Passage {
  document_name: string;
  content: string;
  source_url?: string;
}

export interface ToolInvocation {
  /** The endpoint's HTTP status; null when no answer came (then `error_code` and `error` say why). */
  status: number | null;
  body: unknown;
  duration_ms: number;
  /** Why no answer came, naming the endpoint's host at most: for logs, not for the model or the caller. */
  error: string | null;
  /** The kind of failure when no answer came: `timeout`, `network`, `tls`, `blocked_address`, ... */
  error_code: string | null;
}

export type CallEvent =
  | {
      seq: number;
      type: 'transcript';
      role: 'assistant' | 'user';
      text: string;
      at: string;
      start_ms?: number;
      end_ms?: number;
    }
  | { seq: number; type: 'note'; text: string; at: string }
  | { seq: number; type: 'dtmf'; digits: string; direction: 'inbound' | 'outbound'; at: string };

/** Why a call ended, as the service records it. */
export type EndedReason =
  'customer_hangup' | 'assistant_hangup' | 'transferred' | 'voicemail' | 'max_duration' | 'owner_hangup' | 'error';

export interface CallReport {
  assistant_id: number;
  type: CallType;
  status: CallStatus;
  client_phone_number: string;
  assistant_phone_number: string;
  campaign_id?: number;
  lead_id?: number;
  /** Seconds. */
  duration?: number;
  answered_by?: AnsweredBy;
  ended_reason?: EndedReason;
  evaluation?: Record<string, unknown>;
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

  /** Whether sending the same request again may succeed: no answer, a timeout, a rate limit or a server error. */
  get retryable(): boolean {
    return this.status === undefined || this.status === 408 || this.status === 429 || this.status >= 500;
  }
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
  async recordEvents(events: CallEvent[]): Promise<{ recorded: number; duplicates: number }> {
    const answer = await this.http.send<{ data: { recorded: number; duplicates: number } }>(
      'POST',
      this.path('/events'),
      this.token,
      { events },
    );
    return answer.data;
  }

  /** The final write; repeating the same final write is harmless. */
  async report(report: CallReport): Promise<void> {
    await this.http.send('PUT', this.path(), this.token, report);
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
