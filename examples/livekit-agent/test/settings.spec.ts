import { SettingsError, readSettings } from '../src/settings.js';

describe('readSettings', () => {
  const minimal = {
    LIVEKIT_URL: 'wss://example.livekit.cloud',
    LIVEKIT_API_KEY: 'key',
    LIVEKIT_API_SECRET: 'secret',
    VOICE_SERVICE_URL: 'https://voice.example.com',
    RUNTIME_API_TOKEN: 'runtime-token',
    DEEPGRAM_API_KEY: 'dg',
    OPENAI_API_KEY: 'sk',
  };

  it('names its defaults: Deepgram for speech-to-text, OpenAI for the LLM and the voice', () => {
    expect(readSettings(minimal)).toEqual({
      serviceUrl: 'https://voice.example.com',
      runtimeToken: 'runtime-token',
      agentName: 'voice-assistant',
      unavailableMessage: expect.any(String),
      busyMessage: 'Sorry, all our lines are busy right now. Please call again in a few minutes.',
      httpPort: undefined,
      models: {
        stt: { provider: 'deepgram', model: 'nova-3' },
        llm: { provider: 'openai', model: 'gpt-4.1-mini' },
        tts: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'alloy' },
        keyed: ['deepgram', 'openai', 'livekit'],
      },
    });
  });

  it('takes the providers, models and voice it is given, and needs only the keys of the providers chosen', () => {
    const settings = readSettings({
      LIVEKIT_URL: 'ws://127.0.0.1:7880',
      VOICE_SERVICE_URL: 'http://10.0.0.5:3000',
      RUNTIME_API_TOKEN: 'runtime-token',
      LIVEKIT_AGENT_NAME: 'front-desk',
      STT_PROVIDER: 'livekit',
      LLM_PROVIDER: 'livekit',
      TTS_PROVIDER: 'livekit',
      TTS_VOICE: 'a-voice',
      LLM_MODEL: 'openai/gpt-4.1',
      LIVEKIT_API_KEY: 'key',
      LIVEKIT_API_SECRET: 'secret',
      AGENT_HTTP_PORT: '8082',
    });
    expect(settings).toMatchObject({
      agentName: 'front-desk',
      httpPort: 8082,
      models: {
        stt: { provider: 'livekit', model: 'deepgram/nova-3' },
        llm: { provider: 'livekit', model: 'openai/gpt-4.1' },
        tts: { provider: 'livekit', model: 'cartesia/sonic-3', voice: 'a-voice' },
        keyed: ['livekit'],
      },
    });
  });

  it('stops at boot, naming the variable, when one is missing or wrong', () => {
    const without = (name: keyof typeof minimal) => ({ ...minimal, [name]: undefined });
    expect(() => readSettings(without('VOICE_SERVICE_URL'))).toThrow('VOICE_SERVICE_URL is required');
    expect(() => readSettings(without('RUNTIME_API_TOKEN'))).toThrow('RUNTIME_API_TOKEN is required');
    expect(() => readSettings(without('DEEPGRAM_API_KEY'))).toThrow('DEEPGRAM_API_KEY is required');
    expect(() => readSettings(without('LIVEKIT_URL'))).toThrow('LIVEKIT_URL is required');
    expect(() => readSettings({ ...minimal, LIVEKIT_URL: 'example.livekit.cloud' })).toThrow(/LIVEKIT_URL must be/);
    expect(() => readSettings({ ...minimal, VOICE_SERVICE_URL: 'voice.example.com' })).toThrow(/http\(s\) URL/);
    expect(() => readSettings({ ...minimal, STT_PROVIDER: 'whisper' })).toThrow(
      'STT_PROVIDER must be one of deepgram, openai, livekit',
    );
    expect(() => readSettings({ ...minimal, AGENT_HTTP_PORT: '80a' })).toThrow(/AGENT_HTTP_PORT/);
  });

  it('names every bad variable at once, on one line', () => {
    const read = () =>
      readSettings({ ...minimal, RUNTIME_API_TOKEN: ' ', TTS_PROVIDER: 'polly', AGENT_HTTP_PORT: '0', OPENAI_API_KEY: '' });
    expect(read).toThrow(SettingsError);
    expect(read).toThrow(
      'Invalid configuration: RUNTIME_API_TOKEN is required; TTS_PROVIDER must be one of openai, livekit; ' +
        'OPENAI_API_KEY is required; AGENT_HTTP_PORT must be a port number',
    );
  });
});
