import { inference, log, voice } from '@livekit/agents';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import * as openai from '@livekit/agents-plugin-openai';
import type { SessionAssistant } from './service-client.js';
import { DEFAULT_MODELS, DEFAULT_VOICES, type ModelSettings } from './settings.js';

/** What one call runs: each stage's provider and model, resolved from the assistant's choices and the agent's. */
export interface Pipeline {
  /** `language` one tag or `multi`; `languages` the assistant's own, for a provider that takes a list. */
  stt: { provider: ModelSettings['stt']['provider']; model: string; language: string | undefined; languages: string[] };
  llm: { provider: ModelSettings['llm']['provider']; model: string; temperature: number | undefined };
  tts: {
    provider: ModelSettings['tts']['provider'];
    model: string;
    voice: string;
    speed: number | undefined;
    language: string | undefined;
  };
  /** The assistant's choices this agent could not honour (a provider without its keys here): logged, not fatal. */
  ignored: string[];
}

type Stage = 'stt' | 'llm' | 'tts';

/**
 * The assistant's provider for a stage when this agent holds its keys, with its model or the one the agent would use
 * for that provider; else the agent's own provider and model. A call is never refused for a choice the service
 * accepted: it runs on the defaults, and the choice is reported.
 */
function stage<S extends Stage>(
  models: ModelSettings,
  name: S,
  chosen: { provider: string; model?: string | null } | null,
  ignored: string[],
): { provider: ModelSettings[S]['provider']; model: string; own: boolean } {
  const fallback = models[name];
  if (!chosen) return { provider: fallback.provider, model: fallback.model, own: false };
  const defaults = DEFAULT_MODELS[name] as Record<string, string>;
  if (!(chosen.provider in defaults) || !models.keyed.includes(chosen.provider)) {
    ignored.push(`${name} provider ${chosen.provider}`);
    return { provider: fallback.provider, model: fallback.model, own: false };
  }
  const provider = chosen.provider as ModelSettings[S]['provider'];
  const model = chosen.model || (provider === fallback.provider ? fallback.model : defaults[provider]);
  return { provider, model, own: true };
}

/** The pipeline of a call: the assistant's model, transcriber and voice where it names them, else the agent's. */
export function pipelineOf(models: ModelSettings, assistant: SessionAssistant | null): Pipeline {
  const ignored: string[] = [];
  const languages = assistant
    ? [assistant.language, ...assistant.secondary_languages].map((language) => language.iso_2)
    : [];
  // A caller may speak any of the assistant's languages: one language is transcribed as it, several as "multi".
  const spoken = assistant?.transcriber?.language || (languages.length > 1 ? 'multi' : languages[0]);
  const stt = stage(models, 'stt', assistant?.transcriber ?? null, ignored);
  const llm = stage(models, 'llm', assistant?.model ?? null, ignored);
  const tts = stage(models, 'tts', assistant?.voice ?? null, ignored);
  // The voice id is the provider's own: the assistant's, unless its voice provider was set aside for the agent's.
  const voiceChosen = !assistant?.voice || tts.own;
  const defaultVoice = tts.provider === models.tts.provider ? models.tts.voice : DEFAULT_VOICES[tts.provider];
  return {
    stt: { provider: stt.provider, model: stt.model, language: spoken, languages },
    llm: { provider: llm.provider, model: llm.model, temperature: assistant?.model?.temperature ?? undefined },
    tts: {
      provider: tts.provider,
      model: tts.model,
      voice: (voiceChosen && assistant?.voice_id) || defaultVoice,
      speed: (tts.own && assistant?.voice?.speed) || undefined,
      language: spoken === 'multi' ? languages[0] : spoken,
    },
    ignored,
  };
}

/**
 * The session a call runs in: speech-to-text, the LLM and text-to-speech as the assistant names them (or the agent
 * is configured), in the assistant's language and voice. Voice activity and turn detection are left to the
 * framework's defaults (no key of their own). Without an assistant (the service could not say which) only the voice
 * is needed, to say so.
 */
export function createSession(models: ModelSettings, assistant: SessionAssistant | null): voice.AgentSession {
  const pipeline = pipelineOf(models, assistant);
  if (pipeline.ignored.length) {
    log().warn({ assistant: assistant?.id, ignored: pipeline.ignored }, 'no keys here for the assistant’s choice');
  }
  if (!assistant) return new voice.AgentSession({ tts: textToSpeech(pipeline.tts) });
  return new voice.AgentSession({
    stt: speechToText(pipeline.stt),
    llm: languageModel(pipeline.llm),
    tts: textToSpeech(pipeline.tts),
  });
}

function languageModel({ provider, model, temperature }: Pipeline['llm']) {
  return provider === 'openai'
    ? new openai.LLM({ model, temperature })
    : new inference.LLM({ model, modelOptions: temperature === undefined ? {} : { temperature } });
}

function speechToText({ provider, model, language, languages }: Pipeline['stt']) {
  switch (provider) {
    case 'deepgram':
      return new deepgram.STT({ model, language });
    case 'openai':
      // OpenAI's transcription takes the list of languages to expect: the one named, else the assistant's.
      return new openai.STT({ model, language: language && language !== 'multi' ? [language] : languages });
    case 'livekit':
      return new inference.STT({ model: model as inference.STTModels, language });
  }
}

/** The voice id is the provider's own (an OpenAI voice name, a Cartesia voice id, ...), as the assistant stores it. */
function textToSpeech({ provider, model, voice: voiceId, speed, language }: Pipeline['tts']) {
  switch (provider) {
    case 'openai':
      return new openai.TTS({ model, voice: voiceId as openai.TTSVoices, ...(speed === undefined ? {} : { speed }) });
    case 'livekit':
      return new inference.TTS({
        model: model as inference.TTSModels,
        voice: voiceId,
        language,
        ...(speed === undefined ? {} : { modelOptions: { speed } }),
      });
  }
}
