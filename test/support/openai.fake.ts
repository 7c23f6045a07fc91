import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * OpenAI's REST API on 127.0.0.1, as strict as the real one for what this service sends: chat completions (with
 * strict structured outputs) and embeddings. Each rule says where it was read: the API reference and the Structured
 * Outputs guide ("Supported schemas"), the official client's source (openai-node v6.49: `src/client.ts`,
 * `src/resources/embeddings.ts`, `src/lib/transform.ts`), or the API's own answers as quoted in public bug reports
 * (messages, `type`, `param` and `code`). Wording marked "approximate" could not be read anywhere and is close to the
 * real one; its status, `type`, `param` and `code` are what the real API uses for errors of that kind.
 *
 * Tests script chat answers (`answer`), faults (`fail`), a vector function (`vectorFor`) and latency, and read every
 * request received (`requests`) and the most requests it held at once (`maxInFlight`).
 */

export type Json = Record<string, any>;

/** One chat answer, in the order given; without any, a text (or a minimal instance of the schema asked for). */
export type ScriptedAnswer =
  | { content: string }
  | { json: unknown }
  | { refusal: string }
  | { length: true; content?: string }
  | { contentFilter: true };

/** A fault answered instead of the next request (of `endpoint`, when given). */
export type Fault =
  | { status: 429; retryAfter?: string; retryAfterMs?: string; code?: 'rate_limit_exceeded' | 'insufficient_quota' }
  | { status: 500 | 502 | 503 }
  | { delayMs: number }
  | { reset: true };

export type Endpoint = 'chat' | 'embeddings';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Json | undefined;
  at: number;
}

/** An error answer: status and OpenAI's `{error: {message, type, param, code}}`. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}

const invalid = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError(400, message, param, code);

interface ChatModel {
  /** The dated snapshot an answer names, as the real API answers for an alias. */
  snapshot: string;
  contextTokens: number;
  maxOutputTokens: number;
}

interface EmbeddingModel {
  dimensions: number;
  /** Only text-embedding-3 and later take `dimensions` (API reference, "Create embeddings", `dimensions`). */
  shortenable: boolean;
}

const CHAT_MODELS: Record<string, ChatModel> = {
  'gpt-4o-mini': { snapshot: 'gpt-4o-mini-2024-07-18', contextTokens: 128_000, maxOutputTokens: 16_384 },
  'gpt-4o': { snapshot: 'gpt-4o-2024-08-06', contextTokens: 128_000, maxOutputTokens: 16_384 },
  'gpt-4.1-mini': { snapshot: 'gpt-4.1-mini-2025-04-14', contextTokens: 1_047_576, maxOutputTokens: 32_768 },
};

const EMBEDDING_MODELS: Record<string, EmbeddingModel> = {
  'text-embedding-3-small': { dimensions: 1536, shortenable: true },
  'text-embedding-3-large': { dimensions: 3072, shortenable: true },
  'text-embedding-ada-002': { dimensions: 1536, shortenable: false },
};

// API reference, "Create chat completion": the request's parameters. Anything else is "Unrecognized request argument".
const CHAT_PARAMETERS = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);
// API reference, "Create embeddings".
const EMBEDDING_PARAMETERS = new Set(['input', 'model', 'dimensions', 'encoding_format', 'user']);
const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

/** API reference, "Create embeddings", `input`: 2048 inputs, 8192 tokens each, 300,000 tokens a request. */
export const EMBEDDING_MAX_INPUTS = 2048;
export const EMBEDDING_MAX_INPUT_TOKENS = 8192;
export const EMBEDDING_MAX_REQUEST_TOKENS = 300_000;

/**
 * Tokens of a text, approximately, as cl100k/o200k cut it: a run of ASCII letters a token per 4, digits a token per
 * 3, other ASCII signs a token each, a non-ASCII character a token (two outside the BMP). Never more than the text's
 * UTF-8 bytes, as a byte-level BPE.
 */
export function countTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(/[A-Za-z]+|[0-9]+|[\x21-\x7e]|[^\x00-\x7f]/gu)) {
    const piece = match[0];
    if (/^[A-Za-z]/.test(piece)) tokens += Math.ceil(piece.length / 4);
    else if (/^[0-9]/.test(piece)) tokens += Math.ceil(piece.length / 3);
    else if (piece.codePointAt(0)! > 0xffff) tokens += 2;
    else tokens += 1;
  }
  return tokens;
}

/**
 * A deterministic unit vector of a text: a hashed bag of its lower-cased words (each word adds ±1 at a position its
 * hash picks), so texts sharing words are near and a test can assert a ranking. The API's vectors are unit length
 * too (embeddings guide: "normalized to length 1").
 */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [text];
  for (const word of words) {
    const hash = createHash('sha256').update(word).digest();
    vector[hash.readUInt32LE(0) % dimensions] += hash[4] & 1 ? 1 : -1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => Math.fround(value / norm));
}

export class FakeOpenAi {
  /** A key shaped as OpenAI's project keys. */
  readonly apiKey = `sk-proj-${randomBytes(36).toString('base64url')}`;
  readonly requests: ReceivedRequest[] = [];
  /** Every answer waits this long first (a provider's time to answer). */
  latencyMs = 0;
  /** Vectors of embeddings (default: `bagOfWordsVector`). */
  vectorFor: (text: string, dimensions: number) => number[] = bagOfWordsVector;
  inFlight = 0;
  maxInFlight = 0;
  private readonly answers: ScriptedAnswer[] = [];
  /** Ends the waits of requests still held (a delay fault, latency) when the fake closes. */
  private readonly closing = new AbortController();
  private readonly faults: { fault: Fault; endpoint?: Endpoint; when?: (body: Json | undefined) => boolean }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeOpenAi> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const fake = new FakeOpenAi(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => void fake.handle(request, response));
    return fake;
  }

  /** What LLM_BASE_URL names: the API's root, `/v1` included. */
  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  /** Queues chat answers, taken in order by the next chat completions. */
  answer(...answers: ScriptedAnswer[]): void {
    this.answers.push(...answers);
  }

  /**
   * Queues faults, each answered instead of the next request (of `endpoint`, when given, and whose body `when` picks:
   * a test's own requests among those of the other data in a shared database).
   */
  fail(fault: Fault, times = 1, endpoint?: Endpoint, when?: (body: Json | undefined) => boolean): void {
    for (let i = 0; i < times; i++) this.faults.push({ fault, endpoint, when });
  }

  /** The requests received at one path (`/v1/chat/completions`, `/v1/embeddings`). */
  requestsTo(path: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  async close(): Promise<void> {
    this.closing.abort();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (request.url ?? '').split('?')[0];
    let body: Json | undefined;
    try {
      body = raw ? (JSON.parse(raw) as Json) : undefined;
    } catch {
      body = undefined;
    }
    this.requests.push({ method: request.method ?? '', path, headers: request.headers, body, at: Date.now() });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    response.once('close', () => this.inFlight--);
    const headers = {
      'content-type': 'application/json',
      // Every answer's id (client.ts reads `x-request-id` into `requestID`).
      'x-request-id': `req_${randomBytes(16).toString('hex')}`,
      'openai-processing-ms': String(this.latencyMs),
    };
    const reply = (status: number, payload: object, extra: Record<string, string> = {}) => {
      if (!response.destroyed) response.writeHead(status, { ...headers, ...extra }).end(JSON.stringify(payload));
    };
    const fail = (error: ApiError, extra: Record<string, string> = {}) =>
      reply(
        error.status,
        { error: { message: error.message, type: error.type, param: error.param, code: error.code } },
        extra,
      );
    try {
      // An unknown path or method: "Invalid URL (POST /v1/...)".
      const endpoint: Endpoint | undefined =
        request.method === 'POST' && path === '/v1/chat/completions'
          ? 'chat'
          : request.method === 'POST' && path === '/v1/embeddings'
            ? 'embeddings'
            : undefined;
      if (!endpoint) throw new ApiError(404, `Invalid URL (${request.method} ${path})`);
      this.authenticate(request.headers.authorization);
      const fault = this.takeFault(endpoint, body);
      if (fault && 'reset' in fault) return void request.socket.destroy();
      if (fault && 'delayMs' in fault) await this.wait(fault.delayMs);
      if (fault && 'status' in fault) return this.answerFault(fault, body, fail);
      if (this.latencyMs > 0) await this.wait(this.latencyMs);
      if (raw && body === undefined)
        throw invalid(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
        );
      if (body === undefined || typeof body !== 'object' || Array.isArray(body))
        throw invalid('you must provide a model parameter');
      reply(200, endpoint === 'chat' ? this.chat(body) : this.embeddings(body), rateLimitHeaders(1000, 999));
    } catch (error) {
      if (this.closing.signal.aborted) return;
      if (error instanceof ApiError) return fail(error);
      fail(new ApiError(500, `fake: ${(error as Error).message}`, null, null, 'server_error'));
    }
  }

  /**
   * client.ts `bearerAuth` sends `Authorization: Bearer <key>`. The API's answers, as quoted in bug reports: no key is
   * 401 "You didn't provide an API key..." with code null; a wrong one 401 `invalid_api_key`, naming the key masked
   * (its first 8 and last 4 characters) or, when short, whole.
   */
  private authenticate(header: string | undefined): void {
    const key = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    if (!key)
      throw new ApiError(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
      );
    if (key !== this.apiKey) {
      const shown = key.length > 12 ? `${key.slice(0, 8)}${'*'.repeat(key.length - 12)}${key.slice(-4)}` : key;
      throw new ApiError(
        401,
        `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        null,
        'invalid_api_key',
      );
    }
  }

  private wait(ms: number): Promise<void> {
    return delay(ms, undefined, { signal: this.closing.signal });
  }

  private takeFault(endpoint: Endpoint, body: Json | undefined): Fault | undefined {
    const index = this.faults.findIndex(
      (item) => (item.endpoint === undefined || item.endpoint === endpoint) && (item.when?.(body) ?? true),
    );
    return index < 0 ? undefined : this.faults.splice(index, 1)[0].fault;
  }

  /**
   * Rate limits guide: 429 with `x-ratelimit-*` headers; `rate_limit_exceeded` (type `requests` or `tokens`) or, out
   * of credit, `insufficient_quota`. Error codes guide: 500 "The server had an error while processing your request",
   * 503 when overloaded.
   */
  private answerFault(
    fault: Extract<Fault, { status: number }>,
    body: Json | undefined,
    fail: (error: ApiError, extra?: Record<string, string>) => void,
  ): void {
    if (fault.status !== 429) {
      const message =
        fault.status === 503
          ? 'The server is overloaded or not ready yet.'
          : 'The server had an error while processing your request. Sorry about that!';
      return fail(new ApiError(fault.status, message, null, null, 'server_error'));
    }
    if (fault.code === 'insufficient_quota')
      return fail(
        new ApiError(
          429,
          'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
          null,
          'insufficient_quota',
          'insufficient_quota',
        ),
      );
    const model = typeof body?.model === 'string' ? body.model : 'gpt-4o-mini';
    const extra: Record<string, string> = { ...rateLimitHeaders(60, 0) };
    if (fault.retryAfter !== undefined) extra['retry-after'] = fault.retryAfter;
    if (fault.retryAfterMs !== undefined) extra['retry-after-ms'] = fault.retryAfterMs;
    fail(
      new ApiError(
        429,
        `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in ${fault.retryAfter ?? '1'}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        null,
        'rate_limit_exceeded',
        'requests',
      ),
      extra,
    );
  }

  private chat(body: Json): Json {
    unrecognized(body, CHAT_PARAMETERS);
    const model = chatModel(body);
    const messages = checkMessages(body.messages);
    const temperature = body.temperature as unknown;
    if (temperature !== undefined && temperature !== null) {
      if (typeof temperature !== 'number')
        throw invalid(
          `Invalid type for 'temperature': expected a decimal, but got ${typeName(temperature)} instead.`,
          'temperature',
          'invalid_type',
        );
      if (temperature > 2)
        throw invalid(
          `Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got ${temperature} instead.`,
          'temperature',
          'decimal_above_max_value',
        );
      if (temperature < 0)
        throw invalid(
          `Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got ${temperature} instead.`,
          'temperature',
          'decimal_below_min_value',
        );
    }
    // Quoted from the API in a bug report.
    if (body.max_tokens != null && body.max_completion_tokens != null)
      throw invalid("Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.");
    const limitName = body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
    const limit = body[limitName] as unknown;
    if (limit != null) {
      if (typeof limit !== 'number' || !Number.isInteger(limit))
        throw invalid(
          `Invalid type for '${limitName}': expected an integer, but got ${typeName(limit)} instead.`,
          limitName,
          'invalid_type',
        );
      if (limit < 1)
        throw invalid(
          `Invalid '${limitName}': integer below minimum value. Expected a value >= 1, but got ${limit} instead.`,
          limitName,
          'integer_below_min_value',
        );
      if (limit > model.maxOutputTokens)
        throw invalid(
          `max_tokens is too large: ${limit}. This model supports at most ${model.maxOutputTokens} completion tokens, whereas you provided ${limit}.`,
          limitName,
          'invalid_value',
        );
    }
    const schema = checkResponseFormat(body.response_format, messages);
    // The prompt as the cookbook's "How to count tokens" counts it: 3 a message, 3 priming the reply.
    const promptTokens = messages.reduce((sum, message) => sum + 3 + countTokens(contentText(message.content)), 3);
    if (promptTokens > model.contextTokens)
      throw invalid(
        `This model's maximum context length is ${model.contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
        'messages',
        'context_length_exceeded',
      );
    const scripted = this.answers.shift() ?? { content: defaultAnswer(messages, schema) };
    let content: string | null = null;
    let refusal: string | null = null;
    let finishReason = 'stop';
    if ('refusal' in scripted) refusal = scripted.refusal;
    else if ('contentFilter' in scripted) finishReason = 'content_filter';
    else if ('length' in scripted) {
      content = scripted.content ?? '{"summary": "The caller asked about';
      finishReason = 'length';
    } else {
      content = 'json' in scripted ? JSON.stringify(scripted.json) : scripted.content;
      // Strict structured outputs always follow the schema: a script that does not is the test's mistake.
      if (schema) conforms(schema.schema, content, schema.name);
    }
    // The model stops at the limit asked for, with `length`.
    if (typeof limit === 'number' && content !== null && countTokens(content) > limit) {
      content = truncateToTokens(content, limit);
      finishReason = 'length';
    }
    const completionTokens = countTokens(content ?? refusal ?? '');
    return {
      id: `chatcmpl-${randomBytes(15).toString('base64url')}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: model.snapshot,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal, annotations: [] },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
      service_tier: 'default',
      system_fingerprint: `fp_${randomBytes(5).toString('hex')}`,
    };
  }

  private embeddings(body: Json): Json {
    unrecognized(body, EMBEDDING_PARAMETERS);
    if (body.model === undefined || body.model === null) throw invalid('you must provide a model parameter');
    const name = String(body.model);
    const model = EMBEDDING_MODELS[name];
    if (!model && CHAT_MODELS[name]) throw invalid('You are not allowed to generate embeddings from this model');
    if (!model) throw modelNotFound(name);
    if (body.input === undefined)
      throw invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
    const inputs = embeddingInputs(body.input);
    const tokens = inputs.map((input) => (typeof input === 'string' ? countTokens(input) : input.length));
    const over = tokens.find((count) => count > EMBEDDING_MAX_INPUT_TOKENS);
    if (over !== undefined)
      throw invalid(
        `This model's maximum context length is ${EMBEDDING_MAX_INPUT_TOKENS} tokens, however you requested ${over} tokens (${over} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.`,
      );
    const total = tokens.reduce((sum, count) => sum + count, 0);
    // Quoted from the API in bug reports.
    if (total > EMBEDDING_MAX_REQUEST_TOKENS)
      throw new ApiError(
        400,
        `Requested ${total} tokens, max ${EMBEDDING_MAX_REQUEST_TOKENS} tokens per request`,
        null,
        'max_tokens_per_request',
        'max_tokens_per_request',
      );
    let dimensions = model.dimensions;
    if (body.dimensions !== undefined && body.dimensions !== null) {
      if (!model.shortenable) throw invalid('This model does not support specifying dimensions.');
      if (typeof body.dimensions !== 'number' || !Number.isInteger(body.dimensions))
        throw invalid(
          `Invalid type for 'dimensions': expected an integer, but got ${typeName(body.dimensions)} instead.`,
          'dimensions',
          'invalid_type',
        );
      if (body.dimensions < 1)
        throw invalid(
          `Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got ${body.dimensions} instead.`,
          'dimensions',
          'integer_below_min_value',
        );
      // Approximate wording.
      if (body.dimensions > model.dimensions)
        throw invalid(
          `Invalid value for 'dimensions' = ${body.dimensions}. Must be less than or equal to ${model.dimensions}.`,
          'dimensions',
          'invalid_value',
        );
      dimensions = body.dimensions as number;
    }
    const format = (body.encoding_format as unknown) ?? 'float';
    if (format !== 'float' && format !== 'base64')
      throw invalid(
        `Invalid value: '${String(format)}'. Supported values are: 'float' and 'base64'.`,
        'encoding_format',
        'invalid_value',
      );
    return {
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = this.vectorFor(typeof input === 'string' ? input : input.join(' '), dimensions);
        if (vector.length !== dimensions) throw new Error(`vectorFor gave ${vector.length} numbers, not ${dimensions}`);
        // embeddings.ts: the client asks base64 unless told otherwise and reads it as little-endian float32.
        const embedding =
          format === 'base64'
            ? Buffer.from(Float32Array.from(vector).buffer).toString('base64')
            : vector.map((value) => Math.fround(value));
        return { object: 'embedding', index, embedding };
      }),
      model: name,
      usage: { prompt_tokens: total, total_tokens: total },
    };
  }
}

function rateLimitHeaders(limit: number, remaining: number): Record<string, string> {
  // Rate limits guide, "Rate limits in headers".
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': remaining > 0 ? '60ms' : '1s',
    'x-ratelimit-limit-tokens': '200000',
    'x-ratelimit-remaining-tokens': remaining > 0 ? '199000' : '0',
    'x-ratelimit-reset-tokens': remaining > 0 ? '300ms' : '6m0s',
  };
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Older API answers, still what the API says of an argument it does not know. */
function unrecognized(body: Json, known: Set<string>): void {
  const extra = Object.keys(body).find((key) => !known.has(key));
  if (extra) throw invalid(`Unrecognized request argument supplied: ${extra}`);
}

/** As the API answers an unknown model (code `model_not_found`, 404). */
function modelNotFound(name: string): ApiError {
  return new ApiError(
    404,
    `The model \`${name}\` does not exist or you do not have access to it.`,
    null,
    'model_not_found',
  );
}

function chatModel(body: Json): ChatModel {
  if (body.model === undefined || body.model === null) throw invalid('you must provide a model parameter');
  const name = String(body.model);
  if (EMBEDDING_MODELS[name])
    throw new ApiError(
      404,
      'This is not a chat model and thus not supported in the v1/chat/completions endpoint. Did you mean to use v1/completions?',
      'model',
    );
  const model = CHAT_MODELS[name];
  if (!model) throw modelNotFound(name);
  return model;
}

interface Message {
  role: string;
  content: unknown;
}

/** API reference, "Create chat completion", `messages`: a non-empty array of messages with a known role. */
function checkMessages(messages: unknown): Message[] {
  if (messages === undefined)
    throw invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(messages))
    throw invalid(
      `Invalid type for 'messages': expected an array of objects, but got ${typeName(messages)} instead.`,
      'messages',
      'invalid_type',
    );
  if (messages.length === 0)
    throw invalid(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  messages.forEach((message: unknown, index) => {
    const at = `messages[${index}]`;
    if (message === null || typeof message !== 'object' || Array.isArray(message))
      throw invalid(
        `Invalid type for '${at}': expected an object, but got ${typeName(message)} instead.`,
        at,
        'invalid_type',
      );
    const { role, content } = message as Json;
    if (role === undefined)
      throw invalid(`Missing required parameter: '${at}.role'.`, `${at}.role`, 'missing_required_parameter');
    if (!ROLES.includes(role as string))
      throw invalid(
        `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `${at}.role`,
        'invalid_value',
      );
    if (role === 'tool' && (message as Json).tool_call_id === undefined)
      throw invalid(
        `Missing required parameter: '${at}.tool_call_id'.`,
        `${at}.tool_call_id`,
        'missing_required_parameter',
      );
    // An assistant's message may carry tool calls instead of content; the others need content.
    if (content === undefined && role !== 'assistant')
      throw invalid(`Missing required parameter: '${at}.content'.`, `${at}.content`, 'missing_required_parameter');
    const parts =
      Array.isArray(content) && content.every((part: Json) => part?.type === 'text' && typeof part.text === 'string');
    if (content !== undefined && content !== null && typeof content !== 'string' && !parts)
      throw invalid(
        `Invalid type for '${at}.content': expected one of a string or array of objects, but got ${typeName(content)} instead.`,
        `${at}.content`,
        'invalid_type',
      );
  });
  return messages as Message[];
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: Json) => String(part.text)).join('');
  return '';
}

interface RequestedSchema {
  name: string;
  schema: Json;
  strict: boolean;
}

/** API reference, `response_format`: `text`, `json_object` or `json_schema` (a name, a schema, `strict`). */
function checkResponseFormat(format: unknown, messages: Message[]): RequestedSchema | undefined {
  if (format === undefined || format === null) return undefined;
  if (typeof format !== 'object' || Array.isArray(format))
    throw invalid(
      `Invalid type for 'response_format': expected an object, but got ${typeName(format)} instead.`,
      'response_format',
      'invalid_type',
    );
  const { type } = format as Json;
  if (type === 'text') return undefined;
  if (type === 'json_object') {
    // Quoted from the API: JSON mode needs the word in the conversation.
    if (!messages.some((message) => /json/i.test(contentText(message.content))))
      throw invalid(
        "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
        'messages',
      );
    return undefined;
  }
  if (type !== 'json_schema')
    throw invalid(
      `Invalid value: '${String(type)}'. Supported values are: 'text', 'json_object', and 'json_schema'.`,
      'response_format.type',
      'invalid_value',
    );
  const jsonSchema = (format as Json).json_schema as unknown;
  if (jsonSchema === undefined || jsonSchema === null)
    throw invalid(
      "Missing required parameter: 'response_format.json_schema'.",
      'response_format.json_schema',
      'missing_required_parameter',
    );
  const { name, schema, strict } = jsonSchema as Json;
  if (name === undefined)
    throw invalid(
      "Missing required parameter: 'response_format.json_schema.name'.",
      'response_format.json_schema.name',
      'missing_required_parameter',
    );
  // shared.ts `ResponseFormatJSONSchema.JSONSchema.name`: a-z, A-Z, 0-9, underscores and dashes, at most 64.
  if (typeof name !== 'string' || name.length > 64)
    throw invalid(
      `Invalid 'response_format.json_schema.name': string too long. Expected a string with maximum length 64, but got a string with length ${String(name).length} instead.`,
      'response_format.json_schema.name',
      'string_above_max_length',
    );
  if (!/^[a-zA-Z0-9_-]+$/.test(name))
    throw invalid(
      "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
      'response_format.json_schema.name',
      'invalid_value',
    );
  const root = (schema ?? {}) as Json;
  if (strict === true) {
    const problem = strictSchemaProblem(root);
    if (problem) throw invalid(`Invalid schema for response_format '${name}': ${problem}`, 'response_format');
  }
  return { name, schema: root, strict: strict === true };
}

// Structured Outputs guide, "Supported schemas": the supported types; "Some type-specific keywords are not yet
// supported": the composition keywords; transform.ts `JSON_SCHEMA_UNSUPPORTED_SCHEMA_KEYWORDS` the rest the client
// refuses for strict mode; `oneOf` as the API answers it ("'oneOf' is not permitted", quoted in a bug report).
const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
const UNSUPPORTED_KEYWORDS = [
  'allOf',
  'not',
  'dependentRequired',
  'dependentSchemas',
  'if',
  'then',
  'else',
  'oneOf',
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$recursiveAnchor',
  '$recursiveRef',
  'contains',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'dependencies',
  'maxContains',
  'maxProperties',
  'minContains',
  'minProperties',
  'patternProperties',
  'prefixItems',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'uniqueItems',
  'additionalItems',
];
// Guide, "Supported properties": `format` values.
const FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'];
// Guide, "Objects have limitations on nesting depth and size", "Limitations on total string size", "... on enum size".
const MAX_PROPERTIES = 5000;
const MAX_DEPTH = 10;
const MAX_SCHEMA_STRING_CHARS = 120_000;
const MAX_ENUM_VALUES = 1000;
const LARGE_ENUM = 250;
const MAX_LARGE_ENUM_CHARS = 15_000;

/** A context as the API prints it: a Python tuple (`()`, `('properties', 'a')`, `('items',)`). */
function contextOf(path: (string | number)[]): string {
  const items = path.map((item) => (typeof item === 'number' ? String(item) : `'${item}'`));
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
}

/**
 * Why strict structured outputs refuse a schema, in the API's words where they were read ("In context=(...),
 * 'additionalProperties' is required to be supplied and to be false.", "... 'required' is required to be supplied and
 * to be an array including every key in properties. Missing 'x'.", "'oneOf' is not permitted.", "schema must be a
 * JSON Schema of 'type: \"object\"', got 'type: \"string\"'."; the limits' wording is approximate).
 */
export function strictSchemaProblem(root: Json): string | undefined {
  if (root.type !== 'object' || root.anyOf !== undefined)
    return `schema must be a JSON Schema of 'type: "object"', got 'type: "${root.anyOf !== undefined ? 'None' : String(root.type ?? 'None')}"'.`;
  const totals = { properties: 0, strings: 0, enumValues: 0 };
  const definitions = { ...((root.$defs as Json) ?? {}), ...((root.definitions as Json) ?? {}) };
  for (const name of Object.keys(definitions)) totals.strings += name.length;

  const walk = (node: unknown, path: (string | number)[], depth: number): string | undefined => {
    const at = `In context=${contextOf(path)}, `;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return `${at}schema must be a JSON object.`;
    const schema = node as Json;
    if (depth > MAX_DEPTH) return `${at}the schema's nesting depth exceeds the limit of ${MAX_DEPTH} levels.`;
    for (const keyword of UNSUPPORTED_KEYWORDS) if (keyword in schema) return `${at}'${keyword}' is not permitted.`;
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      const target = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)?.[2];
      if (ref !== '#' && (target === undefined || !(target in definitions)))
        return `${at}reference to component '${ref}' which was not found in the schema.`;
      return undefined;
    }
    for (const [keyword, value] of [
      ['$defs', schema.$defs],
      ['definitions', schema.definitions],
    ] as const) {
      if (value === undefined) continue;
      for (const [name, definition] of Object.entries(value as Json)) {
        const problem = walk(definition, [...path, keyword, name], depth);
        if (problem) return problem;
      }
    }
    if (schema.const !== undefined && typeof schema.const === 'string') totals.strings += schema.const.length;
    if (Array.isArray(schema.anyOf)) {
      for (const [index, branch] of (schema.anyOf as unknown[]).entries()) {
        const problem = walk(branch, [...path, 'anyOf', index], depth);
        if (problem) return problem;
      }
      return undefined;
    }
    const types = (Array.isArray(schema.type) ? schema.type : [schema.type]) as unknown[];
    if (schema.type === undefined && schema.enum === undefined && schema.const === undefined)
      return `${at}schema must have a 'type' key.`;
    for (const type of types)
      if (type !== undefined && !TYPES.includes(type as string)) return `${at}'${String(type)}' is not a valid type.`;
    if (schema.format !== undefined && !FORMATS.includes(schema.format as string))
      return `${at}'${String(schema.format)}' is not a supported format.`;
    if (schema.enum !== undefined) {
      if (!Array.isArray(schema.enum) || schema.enum.length === 0) return `${at}'enum' must be a non-empty array.`;
      totals.enumValues += schema.enum.length;
      if (totals.enumValues > MAX_ENUM_VALUES)
        return `${at}the schema has more than ${MAX_ENUM_VALUES} enum values across all enum properties.`;
      const strings = (schema.enum as unknown[]).filter((value): value is string => typeof value === 'string');
      const characters = strings.reduce((sum, value) => sum + value.length, 0);
      totals.strings += characters;
      if (schema.enum.length > LARGE_ENUM && characters > MAX_LARGE_ENUM_CHARS)
        return `${at}the enum's values total ${characters} characters; an enum of more than ${LARGE_ENUM} values may total at most ${MAX_LARGE_ENUM_CHARS}.`;
      for (const value of schema.enum as unknown[]) {
        const type = value === null ? 'null' : Number.isInteger(value) ? 'integer' : typeof value;
        const fits = types[0] === undefined || types.includes(type) || (type === 'integer' && types.includes('number'));
        if (!fits)
          return `${at}enum value ${JSON.stringify(value)} does not validate against ${JSON.stringify({ type: schema.type })}.`;
      }
    }
    if (types.includes('object')) {
      if (schema.additionalProperties !== false)
        return `${at}'additionalProperties' is required to be supplied and to be false.`;
      const properties = (schema.properties ?? {}) as Json;
      const keys = Object.keys(properties);
      const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
      const missing = keys.find((key) => !required.includes(key));
      if (missing !== undefined || !Array.isArray(schema.required))
        return `${at}'required' is required to be supplied and to be an array including every key in properties. Missing '${missing ?? keys[0] ?? ''}'.`;
      const extra = required.find((key) => !keys.includes(key as string));
      if (extra !== undefined)
        return `${at}'required' is required to be supplied and to be an array including every key in properties. Extra required key '${String(extra)}' supplied.`;
      totals.properties += keys.length;
      if (totals.properties > MAX_PROPERTIES)
        return `${at}the schema has more than ${MAX_PROPERTIES} object properties in total.`;
      for (const key of keys) {
        totals.strings += key.length;
        const problem = walk(properties[key], [...path, 'properties', key], depth + 1);
        if (problem) return problem;
      }
    }
    if (types.includes('array')) {
      // transform.ts: "declares an array without `items`"; the API: "array schema missing items".
      if (schema.items === undefined) return `${at}array schema missing items.`;
      const problem = walk(schema.items, [...path, 'items'], depth + 1);
      if (problem) return problem;
    }
    if (totals.strings > MAX_SCHEMA_STRING_CHARS)
      return `${at}the schema's property names, definition names, enum and const values total more than ${MAX_SCHEMA_STRING_CHARS} characters.`;
    return undefined;
  };
  return walk(root, [], 1);
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** Throws when a scripted answer does not follow the schema asked for (a strict model's answer always does). */
function conforms(schema: Json, content: string, name: string): void {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    throw new Error(`the scripted answer for schema ${name} is not JSON: ${content.slice(0, 80)}`);
  }
  const validate = ajv.compile(schema);
  if (!validate(value))
    throw new Error(`the scripted answer does not follow schema ${name}: ${ajv.errorsText(validate.errors)}`);
}

/** What the model says unprompted: the smallest instance of the schema, or a line of text. */
function defaultAnswer(messages: Message[], schema: RequestedSchema | undefined): string {
  if (schema) return JSON.stringify(instanceOf(schema.schema, schema.schema));
  const last = contentText(messages[messages.length - 1]?.content);
  return `Fake answer to: ${last.slice(0, 60)}`;
}

function instanceOf(schema: Json, root: Json): unknown {
  if (schema.$ref === '#') return undefined;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop()!;
    return instanceOf(((root.$defs ?? root.definitions) as Json)[name] as Json, root);
  }
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return instanceOf(schema.anyOf[0] as Json, root);
  const type = Array.isArray(schema.type) ? (schema.type.includes('null') ? 'null' : schema.type[0]) : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Json).map(([key, value]) => [key, instanceOf(value as Json, root)]),
      );
    case 'array':
      return Array.from({ length: typeof schema.minItems === 'number' ? schema.minItems : 0 }, () =>
        instanceOf(schema.items as Json, root),
      );
    case 'string':
      return typeof schema.format === 'string'
        ? (FORMAT_EXAMPLES[schema.format] ?? '')
        : 'x'.repeat(typeof schema.minLength === 'number' ? schema.minLength : 0);
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '1970-01-01T00:00:00Z',
  time: '00:00:00Z',
  date: '1970-01-01',
  duration: 'P1D',
  email: 'caller@example.com',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function truncateToTokens(text: string, limit: number): string {
  let cut = text.slice(0, limit * 4);
  while (cut.length > 0 && countTokens(cut) > limit) cut = cut.slice(0, -1);
  return cut;
}

/** API reference, "Create embeddings", `input`: a string or token array, or an array of either; never empty. */
function embeddingInputs(input: unknown): (string | number[])[] {
  // Quoted from the API (bug reports) for an empty or malformed input.
  const malformed = () =>
    invalid("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.");
  const tokenArray = (value: unknown): value is number[] =>
    Array.isArray(value) && value.length > 0 && value.every((item) => Number.isInteger(item) && item >= 0);
  if (typeof input === 'string') {
    if (input === '') throw malformed();
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) throw malformed();
  if (tokenArray(input)) return [input];
  // Approximate wording.
  if (input.length > EMBEDDING_MAX_INPUTS)
    throw invalid(
      `Invalid 'input': array too long. Expected an array with maximum length ${EMBEDDING_MAX_INPUTS}, but got an array with length ${input.length} instead.`,
      'input',
      'array_above_max_length',
    );
  const strings = input.every((item) => typeof item === 'string' && item !== '');
  const tokens = input.every(tokenArray);
  if (!strings && !tokens) throw malformed();
  return input as (string | number[])[];
}
