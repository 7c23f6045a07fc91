import type { ModelProviderSettings } from '@app/config';
import { FakeOpenAi } from '../../../test/support/openai.fake';
import {
  type Completion,
  type CompletionRequest,
  type ModelMeter,
  ModelProviderError,
  type ModelUsage,
} from './model-provider';
import { OpenAiModelProvider } from './openai-model-provider';
import { UnconfiguredModelProvider } from './unconfigured-model-provider';

const meter: ModelMeter = { userId: 7, purpose: 'analysis' };

/** What a post-call analysis might ask: strict, every property required, an optional one as a null union. */
const analysisSchema = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    success: { type: 'boolean' },
    score: { type: ['integer', 'null'], minimum: 1, maximum: 10 },
    topics: { type: 'array', items: { type: 'string', enum: ['billing', 'booking', 'other'] } },
  },
  required: ['summary', 'success', 'score', 'topics'],
  additionalProperties: false,
};

const ask = (overrides: Partial<CompletionRequest> = {}): CompletionRequest => ({
  meter,
  messages: [
    { role: 'system', content: 'Summarise the call.' },
    { role: 'user', content: 'Customer: I want to move my booking to Tuesday.' },
  ],
  ...overrides,
});

/** The error a promise fails with (the test fails if it does not). */
async function failureOf(promise: Promise<unknown>): Promise<ModelProviderError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ModelProviderError)) throw new Error(`expected a ModelProviderError, got ${String(error)}`);
  return error;
}

describe('OpenAiModelProvider against the strict fake of OpenAI', () => {
  let fake: FakeOpenAi;
  let recorded: { meter: ModelMeter; usage: ModelUsage }[];
  beforeEach(async () => {
    fake = await FakeOpenAi.start();
    recorded = [];
  });
  afterEach(() => fake.close());

  const provider = (settings: Partial<ModelProviderSettings> = {}) =>
    new OpenAiModelProvider(
      {
        baseUrl: fake.baseUrl,
        apiKey: fake.apiKey,
        model: 'gpt-4o-mini',
        timeoutSeconds: 10,
        maxRetries: 4,
        concurrency: 4,
        embeddingsModel: 'text-embedding-3-small',
        ...settings,
      },
      { record: (recordedMeter, usage) => Promise.resolve(void recorded.push({ meter: recordedMeter, usage })) },
    );

  it('sends strict structured output and answers the parsed JSON, the model as the provider names it, and usage', async () => {
    const json = { summary: 'Moves the booking to Tuesday.', success: true, score: null, topics: ['booking'] };
    fake.answer({ json });
    const answer = await provider().complete(
      ask({ structuredOutput: { name: 'call_analysis', schema: analysisSchema }, temperature: 0, maxTokens: 500 }),
    );

    expect(answer).toMatchObject({ outcome: 'completed', json, model: 'gpt-4o-mini-2024-07-18', finishReason: 'stop' });
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    expect(answer.usage.totalTokens).toBe(answer.usage.promptTokens + answer.usage.completionTokens);
    expect(recorded).toEqual([{ meter, usage: answer.usage }]);
    const [sent] = fake.requestsTo('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: ask().messages,
      temperature: 0,
      max_completion_tokens: 500,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'call_analysis', schema: analysisSchema, strict: true },
      },
    });
  });

  it('answers plain text without a schema, with the model asked for', async () => {
    fake.answer({ content: 'The caller moved a booking.' });
    const answer = await provider().complete(ask({ model: 'gpt-4.1-mini' }));
    expect(answer).toMatchObject({
      outcome: 'completed',
      text: 'The caller moved a booking.',
      model: 'gpt-4.1-mini-2025-04-14',
    });
    expect(answer).not.toHaveProperty('json');
  });

  it('reports a refusal and an answer cut at max_tokens as outcomes of their own, their tokens recorded', async () => {
    fake.answer({ refusal: "I'm sorry, I can't help with that." });
    const refused = await provider().complete(ask({ structuredOutput: { name: 'a', schema: analysisSchema } }));
    expect(refused).toMatchObject({ outcome: 'refused', refusal: "I'm sorry, I can't help with that." });

    fake.answer({ content: 'A long answer that goes on well past the handful of tokens this request allows.' });
    const cut: Completion = await provider().complete(ask({ maxTokens: 5 }));
    expect(cut).toMatchObject({ outcome: 'truncated', finishReason: 'length' });
    expect(cut.usage.completionTokens).toBe(5);
    expect(recorded.map((entry) => entry.usage)).toEqual([refused.usage, cut.usage]);
  });

  it.each([
    [
      'an object without additionalProperties: false',
      { ...analysisSchema, additionalProperties: undefined },
      "In context=(), 'additionalProperties' is required to be supplied and to be false.",
    ],
    [
      'a property left out of required',
      { ...analysisSchema, required: ['summary', 'success', 'score'] },
      "Missing 'topics'.",
    ],
    [
      'allOf',
      { ...analysisSchema, properties: { ...analysisSchema.properties, summary: { allOf: [{ type: 'string' }] } } },
      "In context=('properties', 'summary'), 'allOf' is not permitted.",
    ],
    [
      'an array at the root',
      { type: 'array', items: { type: 'string' } },
      'schema must be a JSON Schema of \'type: "object"\', got \'type: "array"\'.',
    ],
  ])('reports a schema strict mode refuses (%s) as a permanent error, sending it once', async (_, schema, says) => {
    const error = await failureOf(provider().complete(ask({ structuredOutput: { name: 'call_analysis', schema } })));
    expect(error).toMatchObject({ transient: false, status: 400 });
    expect(error.message).toContain("Invalid schema for response_format 'call_analysis'");
    expect(error.message).toContain(says);
    expect(fake.requests).toHaveLength(1);
    expect(recorded).toEqual([]);
  });

  it('waits out a 429 for as long as its Retry-After says, then succeeds', async () => {
    fake.fail({ status: 429, retryAfter: '1' });
    await provider().complete(ask());
    const [limited, retried] = fake.requests;
    expect(fake.requests).toHaveLength(2);
    expect(retried.at - limited.at).toBeGreaterThanOrEqual(950);
    expect(retried.at - limited.at).toBeLessThan(2000);
    // The client counts its retries to the provider.
    expect(retried.headers['x-stainless-retry-count']).toBe('1');
  });

  it('fails a 429 whose Retry-After is longer than a request may wait at once, transient, with the wait', async () => {
    fake.fail({ status: 429, retryAfter: '120' });
    const started = Date.now();
    const error = await failureOf(provider().complete(ask()));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toMatchObject({ transient: true, status: 429, code: 'rate_limit_exceeded', retryAfterMs: 120_000 });
    expect(fake.requests).toHaveLength(1);
  });

  it('retries a 500 twice with backoff, then succeeds', async () => {
    fake.fail({ status: 500 }, 2);
    const answer = await provider().complete(ask());
    expect(answer.outcome).toBe('completed');
    const times = fake.requests.map((request) => request.at);
    expect(times).toHaveLength(3);
    // openai-node client.ts: 0.5 s, then 1 s, each less up to 25 % jitter.
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(370);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(740);
  });

  it('gives up after LLM_MAX_RETRIES on 503 with a transient error, recording nothing', async () => {
    fake.fail({ status: 503 }, 2);
    const error = await failureOf(provider({ maxRetries: 1 }).complete(ask()));
    expect(error).toMatchObject({ transient: true, status: 503 });
    expect(fake.requests).toHaveLength(2);
    expect(recorded).toEqual([]);
  });

  it('retries a connection reset', async () => {
    fake.fail({ reset: true });
    const answer = await provider().complete(ask());
    expect(answer.outcome).toBe('completed');
    expect(fake.requests).toHaveLength(2);
  });

  it('times an attempt out after LLM_TIMEOUT_SECONDS: transient once the retries are spent', async () => {
    fake.fail({ delayMs: 3000 }, 2);
    const started = Date.now();
    const error = await failureOf(provider({ timeoutSeconds: 1, maxRetries: 1 }).complete(ask()));
    expect(error).toMatchObject({ transient: true, code: 'timeout' });
    expect(error.message).toContain('did not answer within 1 s');
    expect(fake.requests).toHaveLength(2);
    // Two attempts of 1 s and a backoff, where the fake would hold each for 3 s.
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('reports a wrong key as permanent, without the key or any part of it in the message', async () => {
    const key = 'sk-proj-WRONGkey0123456789abcdefWXYZ';
    const error = await failureOf(provider({ apiKey: key, maxRetries: 4 }).complete(ask()));
    expect(error).toMatchObject({ transient: false, status: 401, code: 'invalid_api_key' });
    expect(error.message).toContain('Incorrect API key provided');
    expect(error.message).not.toContain(key);
    expect(error.message).not.toContain(key.slice(0, 8));
    expect(error.message).not.toContain(key.slice(-4));
    expect(fake.requests).toHaveLength(1);

    // A short key the provider echoes whole.
    const short = await failureOf(provider({ apiKey: 'hunter2' }).complete(ask()));
    expect(short.message).not.toContain('hunter2');
  });

  it('sends no Authorization header without a key (Ollama, vLLM), which OpenAI itself refuses', async () => {
    const error = await failureOf(provider({ apiKey: undefined }).complete(ask()));
    expect(fake.requests[0].headers).not.toHaveProperty('authorization');
    expect(error).toMatchObject({ transient: false, status: 401 });
  });

  it('reports an unknown model as permanent', async () => {
    const error = await failureOf(provider({ model: 'gpt-9' }).complete(ask()));
    expect(error).toMatchObject({ transient: false, status: 404, code: 'model_not_found' });
  });

  it('reports an account out of credit (429 insufficient_quota) as permanent', async () => {
    fake.fail({ status: 429, code: 'insufficient_quota' }, 5);
    const error = await failureOf(provider({ maxRetries: 0 }).complete(ask()));
    expect(error).toMatchObject({ transient: false, status: 429, code: 'insufficient_quota' });
  });

  it('never has more requests at the provider than LLM_CONCURRENCY', async () => {
    fake.latencyMs = 100;
    const limited = provider({ concurrency: 3 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => limited.complete(ask())));
    expect(answers).toHaveLength(10);
    expect(fake.maxInFlight).toBe(3);
  });

  describe('embeddings', () => {
    it('answers one vector per input in order, from base64 as the client asks, near for shared words', async () => {
      const texts = ['opening hours of the shop', 'refund policy for returns', 'the shop opening hours on sunday'];
      const answer = await provider().embed({ meter: { userId: 7, purpose: 'document_embeddings' }, inputs: texts });
      expect(answer.vectors).toHaveLength(3);
      expect(answer.vectors.every((vector) => vector instanceof Float32Array && vector.length === 1536)).toBe(true);
      const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index], 0);
      expect(cosine(answer.vectors[0], answer.vectors[2])).toBeGreaterThan(
        cosine(answer.vectors[0], answer.vectors[1]),
      );
      expect(answer.model).toBe('text-embedding-3-small');
      const [sent] = fake.requestsTo('/v1/embeddings');
      expect(sent.body).toEqual({ model: 'text-embedding-3-small', input: texts, encoding_format: 'base64' });
      expect(recorded).toEqual([{ meter: { userId: 7, purpose: 'document_embeddings' }, usage: answer.usage }]);
    });

    it('batches more inputs than a request takes, in order, with usage summed over the batches', async () => {
      const texts = Array.from({ length: 4500 }, (_, index) => `passage number ${index}`);
      const small = provider({ embeddingsDimensions: 64 });
      const answer = await small.embed({ meter, inputs: texts });
      const batches = fake.requestsTo('/v1/embeddings').map((request) => (request.body!.input as string[]).length);
      expect(batches).toEqual([2048, 2048, 404]);
      const single = await small.embed({ meter, inputs: [texts[3000]] });
      expect(Array.from(answer.vectors[3000])).toEqual(Array.from(single.vectors[0]));
      expect(answer.usage.totalTokens).toBe(
        recorded.slice(0, 3).reduce((sum, entry) => sum + entry.usage.totalTokens, 0),
      );
      expect(answer.usage.promptTokens).toBe(answer.usage.totalTokens);
    });

    it('keeps each request under 300,000 tokens, estimating them safely where characters / 3 would not', async () => {
      // Chinese is about a token a character: 40 inputs of 8,000 characters are 320,000 tokens.
      const texts = Array.from({ length: 40 }, (_, index) => `${index}${'預約改期'.repeat(2000)}`);
      const answer = await provider().embed({ meter, inputs: texts });
      expect(answer.vectors).toHaveLength(40);
      expect(fake.requestsTo('/v1/embeddings').length).toBeGreaterThan(1);
    });

    it('asks for EMBEDDINGS_DIMENSIONS', async () => {
      const answer = await provider({ embeddingsDimensions: 256 }).embed({ meter, inputs: ['hello there'] });
      expect(answer.vectors[0]).toHaveLength(256);
      expect(fake.requestsTo('/v1/embeddings')[0].body).toMatchObject({ dimensions: 256 });
    });

    it('reports dimensions a model cannot give as permanent', async () => {
      const error = await failureOf(
        provider({ embeddingsModel: 'text-embedding-ada-002', embeddingsDimensions: 256 }).embed({
          meter,
          inputs: ['hi'],
        }),
      );
      expect(error).toMatchObject({ transient: false, status: 400 });
    });

    it('refuses an empty input before asking the provider', async () => {
      const error = await failureOf(provider().embed({ meter, inputs: ['hello', ''] }));
      expect(error).toMatchObject({ transient: false, code: 'empty_input' });
      expect(fake.requests).toHaveLength(0);
    });

    it('is unavailable without EMBEDDINGS_MODEL', async () => {
      const chatOnly = provider({ embeddingsModel: undefined });
      expect([chatOnly.available, chatOnly.embeddingsAvailable]).toEqual([true, false]);
      const error = await failureOf(chatOnly.embed({ meter, inputs: ['hello'] }));
      expect(error).toMatchObject({ transient: false, code: 'not_configured' });
      expect(error.message).toContain('EMBEDDINGS_MODEL');
    });
  });
});

describe('UnconfiguredModelProvider', () => {
  it('is unavailable, and a call anyway fails permanently, naming LLM_BASE_URL', async () => {
    const none = new UnconfiguredModelProvider();
    expect([none.available, none.embeddingsAvailable]).toEqual([false, false]);
    for (const call of [none.complete(), none.embed()]) {
      const error = await failureOf(call);
      expect(error).toMatchObject({ transient: false, code: 'not_configured' });
      expect(error.message).toContain('LLM_BASE_URL');
    }
  });
});

/** The fake refuses what OpenAI refuses: a kinder fake would let an adapter pass that the real API fails. */
describe('the strict fake of OpenAI', () => {
  let fake: FakeOpenAi;
  beforeEach(async () => (fake = await FakeOpenAi.start()));
  afterEach(() => fake.close());

  const post = async (path: string, body: object, key = fake.apiKey) => {
    const response = await fetch(`${fake.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const chat = (body: object) => post('/chat/completions', { model: 'gpt-4o-mini', ...body });
  const user = [{ role: 'user', content: 'Hello' }];
  const strict = (schema: object) =>
    chat({
      messages: user,
      response_format: { type: 'json_schema', json_schema: { name: 's', schema, strict: true } },
    });
  const object = (properties: Record<string, object>) => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  });

  it('answers in OpenAI’s error shape', async () => {
    expect(await chat({ messages: [] })).toEqual({
      status: 400,
      body: {
        error: {
          message:
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'empty_array',
        },
      },
    });
    expect((await chat({ messages: [{ role: 'bot', content: 'x' }] })).body.error).toMatchObject({
      param: 'messages[0].role',
      code: 'invalid_value',
    });
    expect((await chat({ messages: user, temperature: 3 })).body.error.code).toBe('decimal_above_max_value');
    expect((await chat({ messages: user, max_tokens: 5, max_completion_tokens: 5 })).status).toBe(400);
    expect((await chat({ messages: user, top_k: 5 })).body.error.message).toBe(
      'Unrecognized request argument supplied: top_k',
    );
    expect((await post('/chat/completions', { messages: user }, 'sk-wrong')).body.error.code).toBe('invalid_api_key');
  });

  it('takes what strict structured outputs take: null unions, anyOf, definitions, recursion, formats', async () => {
    const schema = {
      ...object({
        when: { type: 'string', format: 'date-time' },
        note: { type: ['string', 'null'] },
        value: { anyOf: [{ type: 'number' }, object({ unit: { type: 'string', enum: ['s', 'ms'] } })] },
        steps: { type: 'array', items: { $ref: '#/$defs/step' }, maxItems: 5 },
        tree: { type: 'array', items: { $ref: '#' } },
      }),
      $defs: { step: object({ text: { type: 'string', pattern: '^[a-z]+$' } }) },
    };
    const answer = await strict(schema);
    expect(answer.body).not.toHaveProperty('error');
    expect(JSON.parse(answer.body.choices[0].message.content)).toMatchObject({ note: null, steps: [] });
  });

  it.each([
    ['a format it does not know', object({ site: { type: 'string', format: 'uri' } })],
    ['an enum value of another type', object({ level: { type: 'string', enum: ['low', 3] } })],
    ['an array without items', object({ list: { type: 'array' } })],
    ['a schema without a type', object({ any: { description: 'anything' } })],
    ['oneOf', object({ one: { oneOf: [{ type: 'string' }, { type: 'number' }] } })],
    ['a missing definition', object({ step: { $ref: '#/$defs/missing' } })],
    ['more than 10 levels', Array.from({ length: 10 }).reduce<object>((inner) => object({ next: inner }), object({}))],
    [
      'more than 1000 enum values',
      object({
        a: { type: 'integer', enum: Array.from({ length: 600 }, (_, index) => index) },
        b: { type: 'integer', enum: Array.from({ length: 600 }, (_, index) => index) },
      }),
    ],
  ])('refuses %s under strict mode', async (_, schema) => {
    const answer = await strict(schema);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', param: 'response_format' });
    expect(answer.body.error.message).toMatch(/^Invalid schema for response_format 's': /);
  });

  it('refuses a scripted answer its schema would not produce', async () => {
    fake.answer({ json: { level: 'extreme' } });
    const answer = await strict(object({ level: { type: 'string', enum: ['low', 'high'] } }));
    expect(answer.status).toBe(500);
    expect(answer.body.error.message).toContain('does not follow schema s');
  });

  it('serves float and base64 embeddings alike, within the documented input limits', async () => {
    const embed = (body: object) => post('/embeddings', { model: 'text-embedding-3-small', ...body });
    const floats = (await embed({ input: 'opening hours', encoding_format: 'float', dimensions: 8 })).body;
    const base64 = (await embed({ input: 'opening hours', encoding_format: 'base64', dimensions: 8 })).body;
    const bytes = Buffer.from(base64.data[0].embedding as string, 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    expect(decoded).toEqual(floats.data[0].embedding);
    expect(floats).toMatchObject({ object: 'list', model: 'text-embedding-3-small', usage: { prompt_tokens: 4 } });
    expect((await embed({ input: '' })).body.error.message).toMatch(/^'\$\.input' is invalid/);
    expect((await embed({ input: ['a', ''] })).status).toBe(400);
    expect((await embed({ input: Array.from({ length: 2049 }, () => 'a') })).body.error.code).toBe(
      'array_above_max_length',
    );
    expect((await embed({ input: 'word '.repeat(8193) })).body.error.message).toContain(
      "This model's maximum context length is 8192 tokens",
    );
    expect((await embed({ input: 'a', dimensions: 4000 })).status).toBe(400);
    expect((await post('/embeddings', { model: 'text-embedding-ada-002', input: 'a', dimensions: 8 })).status).toBe(
      400,
    );
    expect((await post('/embeddings', { model: 'gpt-4o-mini', input: 'a' })).status).toBe(400);
    expect((await embed({ input: 'a', encoding_format: 'utf8' })).body.error.code).toBe('invalid_value');
  });
});
