/** The agent's configuration, read once from the environment when the worker starts. */

/** What a caller hears when the owner's account has no call slot free, unless the deployment words it otherwise. */
export const LINES_BUSY_MESSAGE = 'Sorry, all our lines are busy right now. Please call again in a few minutes.';

export const PROVIDERS = {
  stt: ['deepgram', 'openai', 'livekit'],
  llm: ['openai', 'livekit'],
  tts: ['openai', 'livekit'],
} as const;

export type SttProvider = (typeof PROVIDERS.stt)[number];
export type LlmProvider = (typeof PROVIDERS.llm)[number];
export type TtsProvider = (typeof PROVIDERS.tts)[number];

/** Each provider's model when `*_MODEL` is unset (`livekit` is LiveKit Inference, model ids `provider/model`). */
export const DEFAULT_MODELS = {
  stt: { deepgram: 'nova-3', openai: 'gpt-4o-transcribe', livekit: 'deepgram/nova-3' },
  llm: { openai: 'gpt-4.1-mini', livekit: 'openai/gpt-4.1-mini' },
  tts: { openai: 'gpt-4o-mini-tts', livekit: 'cartesia/sonic-3' },
} as const;

/** The voice of an assistant without a `voice_id`, when `TTS_VOICE` is unset. */
export const DEFAULT_VOICES: Record<TtsProvider, string> = {
  openai: 'alloy',
  livekit: '9626c31c-bec5-4cca-baa8-f8ba9e84c8bc',
};

/** The key each provider's plugin reads; checked at boot so a missing one stops the worker, not a call. */
const PROVIDER_KEYS: Record<string, string[]> = {
  deepgram: ['DEEPGRAM_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  livekit: ['LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'],
};

export interface ModelSettings {
  stt: { provider: SttProvider; model: string };
  llm: { provider: LlmProvider; model: string };
  tts: { provider: TtsProvider; model: string; voice: string };
  /** Every provider whose keys are set: an assistant may choose any of them instead of the defaults above. */
  keyed: string[];
}

export interface Settings {
  /** The service's origin, e.g. https://voice.example.com. */
  serviceUrl: string;
  /** The service's RUNTIME_API_TOKEN: opens sessions, nothing else. */
  runtimeToken: string;
  /** The name the service's dispatches ask for (its own LIVEKIT_AGENT_NAME). */
  agentName: string;
  /** Said before hanging up when the service cannot tell the agent what to run. */
  unavailableMessage: string;
  /** Said before hanging up when the owner's account has as many calls in progress as it may. */
  busyMessage: string;
  /** The worker's health and status port (the framework's 8081 by default; one per worker on a host). */
  httpPort: number | undefined;
  models: ModelSettings;
}

/** A missing or invalid setting: its message names every bad variable on one line. */
export class SettingsError extends Error {}

/**
 * Reads the environment. Throws a SettingsError naming every missing or invalid variable at once, so a deployment is
 * fixed in one round rather than one variable a restart.
 */
export function readSettings(env: Record<string, string | undefined> = process.env): Settings {
  const problems: string[] = [];
  const required = (name: string) => {
    const value = env[name]?.trim();
    if (!value) problems.push(`${name} is required`);
    return value ?? '';
  };
  // Read by the framework too, which would otherwise stop with a stack trace of its own.
  const livekitUrl = required('LIVEKIT_URL');
  if (livekitUrl && !/^(wss?|https?):\/\/[^/]/.test(livekitUrl)) problems.push('LIVEKIT_URL must be a ws(s):// URL');
  required('LIVEKIT_API_KEY');
  required('LIVEKIT_API_SECRET');
  const serviceUrl = required('VOICE_SERVICE_URL');
  if (serviceUrl && !/^https?:\/\/[^/]/.test(serviceUrl)) problems.push('VOICE_SERVICE_URL must be an http(s) URL');
  const runtimeToken = required('RUNTIME_API_TOKEN');
  const stt = oneOf(env, 'STT_PROVIDER', PROVIDERS.stt, problems);
  const llm = oneOf(env, 'LLM_PROVIDER', PROVIDERS.llm, problems);
  const tts = oneOf(env, 'TTS_PROVIDER', PROVIDERS.tts, problems);
  for (const key of new Set([stt, llm, tts].flatMap((provider) => PROVIDER_KEYS[provider]))) required(key);
  const httpPort = env.AGENT_HTTP_PORT?.trim() ? Number(env.AGENT_HTTP_PORT) : undefined;
  if (httpPort !== undefined && !(Number.isInteger(httpPort) && httpPort > 0 && httpPort < 65536)) {
    problems.push('AGENT_HTTP_PORT must be a port number');
  }
  if (problems.length > 0) throw new SettingsError(`Invalid configuration: ${problems.join('; ')}`);
  return {
    serviceUrl,
    runtimeToken,
    agentName: env.LIVEKIT_AGENT_NAME?.trim() || 'voice-assistant',
    unavailableMessage:
      env.SERVICE_UNAVAILABLE_MESSAGE?.trim() || 'Sorry, we cannot take your call right now. Please call again later.',
    busyMessage: env.LINES_BUSY_MESSAGE?.trim() || LINES_BUSY_MESSAGE,
    httpPort,
    models: {
      stt: { provider: stt, model: env.STT_MODEL?.trim() || DEFAULT_MODELS.stt[stt] },
      llm: { provider: llm, model: env.LLM_MODEL?.trim() || DEFAULT_MODELS.llm[llm] },
      tts: {
        provider: tts,
        model: env.TTS_MODEL?.trim() || DEFAULT_MODELS.tts[tts],
        voice: env.TTS_VOICE?.trim() || DEFAULT_VOICES[tts],
      },
      keyed: Object.keys(PROVIDER_KEYS).filter((provider) => PROVIDER_KEYS[provider].every((key) => env[key]?.trim())),
    },
  };
}

/**
 * The variable's value when it names one of `choices`; the first choice, the default, when it is unset or wrong (a
 * wrong one is added to `problems`, and the default stands in so the other checks still run).
 */
function oneOf<T extends string>(
  env: Record<string, string | undefined>,
  name: string,
  choices: readonly T[],
  problems: string[],
): T {
  const value = env[name]?.trim();
  if (!value) return choices[0];
  if (!(choices as readonly string[]).includes(value)) {
    problems.push(`${name} must be one of ${choices.join(', ')}`);
    return choices[0];
  }
  return value as T;
}
