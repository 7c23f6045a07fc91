import { inference, voice } from '@livekit/agents';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import * as openai from '@livekit/agents-plugin-openai';
import type { SessionAssistant } from './service-client.js';
import type { ModelSettings } from './settings.js';

/**
 * The session a call runs in: speech-to-text, the LLM and text-to-speech as configured, in the assistant's
 * language and voice. Voice activity and turn detection are left to the framework's defaults (no key of their own).
 * Without an assistant (the service could not say which) only the voice is needed, to say so.
 */
export function createSession(models: ModelSettings, assistant: SessionAssistant | null): voice.AgentSession {
  const voiceId = assistant?.voice_id || models.tts.voice;
  if (!assistant) return new voice.AgentSession({ tts: textToSpeech(models.tts, voiceId, undefined) });
  const languages = [assistant.language, ...assistant.secondary_languages].map((language) => language.iso_2);
  return new voice.AgentSession({
    stt: speechToText(models.stt, languages),
    llm:
      models.llm.provider === 'openai'
        ? new openai.LLM({ model: models.llm.model })
        : new inference.LLM({ model: models.llm.model }),
    tts: textToSpeech(models.tts, voiceId, languages[0]),
  });
}

/** A caller may speak any of the assistant's languages: one language is transcribed as it, several as "multi". */
function speechToText(settings: ModelSettings['stt'], languages: string[]) {
  const spoken = languages.length > 1 ? 'multi' : languages[0];
  switch (settings.provider) {
    case 'deepgram':
      return new deepgram.STT({ model: settings.model, language: spoken });
    case 'openai':
      return new openai.STT({ model: settings.model, language: languages });
    case 'livekit':
      return new inference.STT({ model: settings.model as inference.STTModels, language: spoken });
  }
}

/** The voice id is the provider's own (an OpenAI voice name, a Cartesia voice id, ...), as the assistant stores it. */
function textToSpeech(settings: ModelSettings['tts'], voiceId: string, language: string | undefined) {
  switch (settings.provider) {
    case 'openai':
      return new openai.TTS({ model: settings.model, voice: voiceId as openai.TTSVoices });
    case 'livekit':
      return new inference.TTS({ model: settings.model as inference.TTSModels, voice: voiceId, language });
  }
}
