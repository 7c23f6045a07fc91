import { Logger } from '@nestjs/common';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import pLimit from 'p-limit';
import type { ModelProviderSettings } from '@app/config';
import { embeddingBatches } from './embedding-batches';
import {
  type Completion,
  type CompletionRequest,
  type EmbeddingRequest,
  type Embeddings,
  type ModelMeter,
  type ModelProvider,
  ModelProviderError,
  type ModelUsage,
  type ModelUsageRecorder,
} from './model-provider';
import { notConfigured } from './unconfigured-model-provider';

/**
 * The longest `Retry-After` the client waits for within a request (holding a slot of the concurrency limit). A
 * provider asking for longer gets a transient error with `retryAfterMs` at once, so the caller's job waits instead.
 */
export const MAX_RETRY_AFTER_IN_REQUEST_MS = 60_000;

/** The client insists on a key; a server that wants none (Ollama, vLLM) gets no Authorization header (below). */
const NO_KEY = 'unused';

/**
 * The model provider through the official `openai` client against `LLM_BASE_URL` (OpenAI, Azure OpenAI's v1 API,
 * Ollama, vLLM or any compatible server). The client bounds each attempt by `LLM_TIMEOUT_SECONDS` and retries 408,
 * 409, 429, 5xx and network errors `LLM_MAX_RETRIES` times with exponential backoff (0.5 s doubling to 8 s, less up
 * to 25 % jitter) or after the provider's `retry-after-ms` / `Retry-After`; this adds the per-process concurrency
 * limit (`LLM_CONCURRENCY`, held through a request's retries), the token record and one error class.
 */
export class OpenAiModelProvider implements ModelProvider {
  readonly available = true;
  readonly embeddingsAvailable: boolean;
  private readonly client: OpenAI;
  private readonly limit: pLimit.Limit;
  private readonly logger = new Logger('ModelProvider');

  constructor(
    private readonly settings: ModelProviderSettings,
    private readonly recorder: ModelUsageRecorder,
  ) {
    this.embeddingsAvailable = Boolean(settings.embeddingsModel);
    this.limit = pLimit(settings.concurrency);
    const logger = this.logger;
    this.client = new OpenAI({
      baseURL: settings.baseUrl,
      apiKey: settings.apiKey ?? NO_KEY,
      // Named here so that nothing comes from the client's own OPENAI_* variables.
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      defaultHeaders: settings.apiKey ? undefined : { Authorization: null },
      timeout: settings.timeoutSeconds * 1000,
      maxRetries: settings.maxRetries,
      fetch: capRetryAfter(globalThis.fetch),
      // The client's warnings only; its debug lines (request details) are never turned on.
      logLevel: 'warn',
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (message: string) => logger.warn(message),
        error: (message: string) => logger.error(message),
      },
    });
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    const structured = request.structuredOutput;
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: request.model ?? this.settings.model,
      messages: request.messages,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.maxTokens === undefined ? {} : { max_completion_tokens: request.maxTokens }),
      ...(structured
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: {
                name: structured.name,
                ...(structured.description === undefined ? {} : { description: structured.description }),
                schema: structured.schema,
                strict: true,
              },
            },
          }
        : {}),
    };
    const answer: ChatCompletion = await this.send(() => this.client.chat.completions.create(body));
    const usage = usageOf(answer.usage);
    await this.record(request.meter, usage);
    const choice = answer.choices?.[0];
    if (!choice?.message) throw malformed('a chat completion without a choice');
    const common = { model: answer.model, finishReason: choice.finish_reason, usage };
    const text = choice.message.content ?? '';
    if (choice.message.refusal) return { ...common, outcome: 'refused', refusal: choice.message.refusal };
    if (choice.finish_reason === 'content_filter')
      return { ...common, outcome: 'refused', refusal: "The provider's content filter stopped the answer." };
    if (choice.finish_reason === 'length') return { ...common, outcome: 'truncated', text };
    if (!structured) return { ...common, outcome: 'completed', text };
    try {
      return { ...common, outcome: 'completed', text, json: JSON.parse(text) as unknown };
    } catch {
      throw new ModelProviderError(`The model's answer is not the JSON its schema "${structured.name}" asks for.`, {
        transient: false,
        code: 'invalid_json',
      });
    }
  }

  async embed(request: EmbeddingRequest): Promise<Embeddings> {
    const model = this.settings.embeddingsModel;
    if (!model) throw notConfigured('EMBEDDINGS_MODEL');
    const empty = request.inputs.findIndex((input) => input.length === 0);
    // The provider refuses an empty input, and with it the whole batch.
    if (empty >= 0)
      throw new ModelProviderError(`Input ${empty} is empty: an empty text has no embedding.`, {
        transient: false,
        code: 'empty_input',
      });
    const vectors: Float32Array[] = [];
    const usage: ModelUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    let answeredModel = model;
    // One batch after another: a large document takes its turns with everyone else's requests.
    for (const [start, end] of embeddingBatches(request.inputs)) {
      const answer = await this.send(() =>
        this.client.embeddings.create({
          model,
          input: request.inputs.slice(start, end),
          ...(this.settings.embeddingsDimensions ? { dimensions: this.settings.embeddingsDimensions } : {}),
        }),
      );
      const batchUsage = usageOf(answer.usage);
      await this.record(request.meter, batchUsage);
      usage.promptTokens += batchUsage.promptTokens;
      usage.totalTokens += batchUsage.totalTokens;
      answeredModel = answer.model;
      const data = [...(answer.data ?? [])].sort((a, b) => a.index - b.index);
      if (data.length !== end - start || data.some((item, index) => item.index !== index))
        throw malformed(`${data.length} embeddings for ${end - start} inputs`);
      for (const item of data) vectors.push(Float32Array.from(item.embedding));
    }
    return { vectors, model: answeredModel, usage };
  }

  /** One request through the concurrency limit, its failure as a ModelProviderError. */
  private async send<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await this.limit(request);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Records an answer's tokens; a failed write is logged, never failing the call that spent them. */
  private async record(meter: ModelMeter, usage: ModelUsage): Promise<void> {
    try {
      await this.recorder.record(meter, usage);
    } catch (error) {
      this.logger.error(
        { userId: meter.userId, purpose: meter.purpose, usage, error: (error as Error).message },
        'model usage not recorded',
      );
    }
  }

  private failure(error: unknown): ModelProviderError {
    if (error instanceof ModelProviderError) return error;
    if (error instanceof APIConnectionTimeoutError)
      return new ModelProviderError(
        `The model provider did not answer within ${this.settings.timeoutSeconds} s (LLM_TIMEOUT_SECONDS).`,
        { transient: true, code: 'timeout' },
      );
    if (error instanceof APIConnectionError)
      return new ModelProviderError(
        `The model provider could not be reached: ${this.redact(describeConnectionError(error))}`,
        { transient: true, code: 'connection_error' },
      );
    if (error instanceof APIError && error.status !== undefined) {
      const status = error.status;
      const code = typeof error.code === 'string' ? error.code : undefined;
      // Out of credit: retrying does not help until the operator pays.
      const transient =
        code !== 'insufficient_quota' && (status === 408 || status === 409 || status === 429 || status >= 500);
      const said = (error.error as { message?: unknown } | undefined)?.message;
      const message = typeof said === 'string' && said ? said : `status ${status}`;
      return new ModelProviderError(`The model provider refused the request (${status}): ${this.redact(message)}`, {
        transient,
        status,
        code,
        retryAfterMs: error.headers ? retryAfterMs(error.headers) : undefined,
      });
    }
    return new ModelProviderError(`The model provider failed: ${this.redact((error as Error).message ?? '')}`, {
      transient: false,
      code: 'unexpected',
    });
  }

  /** Takes the key, and any part of it the provider echoes, out of a message meant for records and people. */
  private redact(text: string): string {
    const key = this.settings.apiKey;
    const withoutKey = key ? text.split(key).join('[redacted]') : text;
    // OpenAI names a refused key in its 401 ("Incorrect API key provided: sk-proj-****abcd."): whole when short.
    return withoutKey.replace(/(api key provided:\s*)\S+/gi, '$1[redacted]');
  }
}

function usageOf(usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined) {
  // Some compatible servers leave usage out: nothing known is recorded as nothing spent.
  const promptTokens = usage?.prompt_tokens ?? 0;
  const completionTokens = usage?.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: usage?.total_tokens ?? promptTokens + completionTokens };
}

function malformed(what: string): ModelProviderError {
  return new ModelProviderError(`The model provider answered ${what}.`, { transient: true, code: 'invalid_answer' });
}

/** The network's reason, as undici gives it under `fetch failed` (ECONNRESET, ECONNREFUSED, ...). */
function describeConnectionError(error: APIConnectionError): string {
  const cause = error.cause as { message?: string; cause?: { code?: string; message?: string } } | undefined;
  return cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.message;
}

/** How long the provider asked to wait: `retry-after-ms`, else `Retry-After` in seconds or as a date. */
export function retryAfterMs(headers: Headers): number | undefined {
  const milliseconds = parseFloat(headers.get('retry-after-ms') ?? '');
  if (!Number.isNaN(milliseconds)) return Math.max(0, milliseconds);
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = parseFloat(value);
  if (!Number.isNaN(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * The client's fetch. The client waits however long a provider's `Retry-After` says. Past `MAX_RETRY_AFTER_IN_REQUEST_MS` the answer gets
 * `x-should-retry: false`, which the client obeys: the request fails now, transient, and the job retries later.
 */
function capRetryAfter(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init).catch((error: unknown) => {
      // The client tells its timeout by an error named AbortError that is an Error of its own realm; fetch's
      // DOMException is not one inside a sandbox (Jest's), which would make a timeout a mere connection error.
      if ((error as { name?: unknown } | null)?.name !== 'AbortError' || error instanceof Error) throw error;
      throw Object.assign(new Error('The request was aborted.'), { name: 'AbortError' });
    });
    const wait = response.ok ? undefined : retryAfterMs(response.headers);
    if (wait === undefined || wait <= MAX_RETRY_AFTER_IN_REQUEST_MS) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}
