/** What the tokens of a request were spent on, as an account's usage records them. */
export type ModelUsePurpose = 'analysis' | 'document_embeddings' | 'search_embeddings';

/** Whose tokens a request spends, and on what: every answer the provider gives is recorded against it. */
export interface ModelMeter {
  userId: number;
  purpose: ModelUsePurpose;
}

/** The tokens one answer (or, for embeddings, all the batches of one call) used, as the provider counted them. */
export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant';
  content: string;
}

/**
 * A JSON Schema the answer must follow, sent as strict structured output: OpenAI requires an object at the root,
 * `additionalProperties: false` and every property in `required` on each object (see the README).
 */
export interface StructuredOutput {
  /** `a-z`, `A-Z`, `0-9`, `_` and `-`, at most 64 characters. */
  name: string;
  description?: string;
  schema: Record<string, unknown>;
}

export interface CompletionRequest {
  meter: ModelMeter;
  messages: ChatMessage[];
  /** Default: `LLM_MODEL`. */
  model?: string;
  temperature?: number;
  /** Sent as `max_completion_tokens`. */
  maxTokens?: number;
  structuredOutput?: StructuredOutput;
}

interface CompletionAnswer {
  /** The model as the provider names it in its answer (often a dated snapshot of the one asked for). */
  model: string;
  /** The provider's own `finish_reason`. */
  finishReason: string;
  usage: ModelUsage;
}

/**
 * A chat completion's answer. `completed`: the text, and for structured output the parsed JSON. `refused`: the model
 * declined (`message.refusal`) or the provider's content filter stopped it. `truncated`: the answer reached
 * `maxTokens` (or the model's limit) and is cut; for structured output its JSON is incomplete, so none is given.
 */
export type Completion =
  | (CompletionAnswer & { outcome: 'completed'; text: string; json?: unknown })
  | (CompletionAnswer & { outcome: 'refused'; refusal: string })
  | (CompletionAnswer & { outcome: 'truncated'; text: string });

export interface EmbeddingRequest {
  meter: ModelMeter;
  /** Non-empty strings, any number: they are sent in batches within the provider's limits. */
  inputs: string[];
}

export interface Embeddings {
  /** One vector per input, in the inputs' order. */
  vectors: Float32Array[];
  model: string;
  /** Summed over the batches. */
  usage: ModelUsage;
}

/**
 * The platform's model provider (post-call analysis, embeddings for search), used on the worker. `available` says
 * whether one is configured at all and `embeddingsAvailable` whether an embeddings model is: a feature checks them
 * once and does without, rather than calling and failing. Every answer's tokens are recorded against the request's
 * `meter`; a failure is a `ModelProviderError`.
 */
export interface ModelProvider {
  readonly available: boolean;
  readonly embeddingsAvailable: boolean;
  complete(request: CompletionRequest): Promise<Completion>;
  embed(request: EmbeddingRequest): Promise<Embeddings>;
}

export const MODEL_PROVIDER = Symbol('MODEL_PROVIDER');

/**
 * What a stored vector was made by: the embeddings model and the dimensions asked (`text-embedding-3-small/512`, or
 * `/native` for the model's own). A vector of another is not compared with this one's: a change re-embeds.
 */
export function embeddingsModelKey(settings: { embeddingsModel?: string; embeddingsDimensions?: number } | undefined) {
  return settings?.embeddingsModel
    ? `${settings.embeddingsModel}/${settings.embeddingsDimensions ?? 'native'}`
    : undefined;
}

/** Adds one answer's tokens to an account's usage (`ModelUsageRepository` in the apps). */
export interface ModelUsageRecorder {
  record(meter: ModelMeter, usage: ModelUsage): Promise<void>;
}

export const MODEL_USAGE_RECORDER = Symbol('MODEL_USAGE_RECORDER');

/**
 * Why a request to the model provider failed. `transient`: a later try may succeed (rate limited, the provider's own
 * error, a timeout, the network), so a job should retry later, after `retryAfterMs` when the provider said; otherwise
 * it cannot succeed as it is (a bad request, a refused key, an unknown model, no provider): record it and stop. The
 * message is safe to store and show: it never holds the API key.
 */
export class ModelProviderError extends Error {
  readonly transient: boolean;
  /** The provider's HTTP status, when it answered. */
  readonly status?: number;
  /** The provider's error code (`invalid_api_key`, `rate_limit_exceeded`, ...), or ours (`not_configured`, ...). */
  readonly code?: string;
  readonly retryAfterMs?: number;

  // No `cause`: the client's error carries the provider's own message, which may echo the key.
  constructor(message: string, details: { transient: boolean; status?: number; code?: string; retryAfterMs?: number }) {
    super(message);
    this.name = 'ModelProviderError';
    this.transient = details.transient;
    this.status = details.status;
    this.code = details.code;
    this.retryAfterMs = details.retryAfterMs;
  }
}
