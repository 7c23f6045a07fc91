import { pipelineOf } from '../src/models.js';
import type { SessionAssistant } from '../src/service-client.js';
import { readSettings } from '../src/settings.js';

describe('pipelineOf', () => {
  // The agent's own choice: Deepgram, OpenAI and OpenAI; keys for OpenAI and Deepgram only.
  const models = readSettings({
    LIVEKIT_URL: 'wss://example.livekit.cloud',
    LIVEKIT_API_KEY: 'key',
    LIVEKIT_API_SECRET: 'secret',
    VOICE_SERVICE_URL: 'https://voice.example.com',
    RUNTIME_API_TOKEN: 'runtime-token',
    DEEPGRAM_API_KEY: 'dg',
    OPENAI_API_KEY: 'sk',
    LLM_MODEL: 'gpt-4.1',
    TTS_VOICE: 'shimmer',
  }).models;
  const english = { id: 1, name: 'English', iso_2: 'en' };
  const german = { id: 2, name: 'German', iso_2: 'de' };
  const assistant = (fields: Partial<SessionAssistant> = {}): SessionAssistant => ({
    id: 7,
    name: 'Front desk',
    type: 'inbound',
    language: english,
    secondary_languages: [],
    voice_id: null,
    model: null,
    transcriber: null,
    voice: null,
    timezone: 'UTC',
    initial_message: null,
    system_prompt: null,
    max_duration: 600,
    record: false,
    variables: {},
    post_call_schema: [],
    ...fields,
  });

  it('runs an assistant that names nothing on the agent’s own models, in its language and voice id', () => {
    expect(pipelineOf(models, assistant({ voice_id: 'echo', secondary_languages: [german] }))).toEqual({
      stt: { provider: 'deepgram', model: 'nova-3', language: 'multi', languages: ['en', 'de'] },
      llm: { provider: 'openai', model: 'gpt-4.1', temperature: undefined },
      tts: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'echo', speed: undefined, language: 'en' },
      ignored: [],
    });
    expect(pipelineOf(models, assistant()).tts.voice).toBe('shimmer');
  });

  it('takes the assistant’s model, transcriber and voice, each provider’s own model where it names none', () => {
    const pipeline = pipelineOf(
      models,
      assistant({
        voice_id: 'nova',
        model: { provider: 'openai', model: 'gpt-4.1-nano', temperature: 0.2 },
        transcriber: { provider: 'openai', model: null, language: 'de' },
        voice: { provider: 'openai', voice_id: 'nova', speed: 1.25 },
      }),
    );
    expect(pipeline).toEqual({
      stt: { provider: 'openai', model: 'gpt-4o-transcribe', language: 'de', languages: ['en'] },
      llm: { provider: 'openai', model: 'gpt-4.1-nano', temperature: 0.2 },
      tts: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'nova', speed: 1.25, language: 'de' },
      ignored: [],
    });
    // Temperature 0 is a temperature.
    const cold = pipelineOf(models, assistant({ model: { provider: 'openai', model: null, temperature: 0 } }));
    expect(cold.llm).toEqual({ provider: 'openai', model: 'gpt-4.1', temperature: 0 });
  });

  it('falls back to its own provider, and its own voice, for a provider it holds no keys of, and says so', () => {
    // A worker whose settings hold no usable key of LiveKit's inference.
    const pipeline = pipelineOf(
      { ...models, keyed: ['deepgram', 'openai'] },
      assistant({
        voice_id: '9626c31c-bec5-4cca-baa8-f8ba9e84c8bc',
        model: { provider: 'livekit', model: 'openai/gpt-4.1', temperature: 0.5 },
        transcriber: { provider: 'livekit', model: 'deepgram/nova-3', language: null },
        voice: { provider: 'livekit', voice_id: '9626c31c-bec5-4cca-baa8-f8ba9e84c8bc', speed: 1.1 },
      }),
    );
    expect(pipeline).toEqual({
      stt: { provider: 'deepgram', model: 'nova-3', language: 'en', languages: ['en'] },
      llm: { provider: 'openai', model: 'gpt-4.1', temperature: 0.5 },
      tts: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'shimmer', speed: undefined, language: 'en' },
      ignored: ['stt provider livekit', 'llm provider livekit', 'tts provider livekit'],
    });
  });

  it('needs only a voice without an assistant', () => {
    expect(pipelineOf(models, null).tts).toEqual({
      provider: 'openai',
      model: 'gpt-4o-mini-tts',
      voice: 'shimmer',
      speed: undefined,
      language: undefined,
    });
  });
});
