import path from 'node:path';
import { readEnvTemplate, strayTemplateLines } from '../../../test/support/env-template';
import { readSettings } from '../src/settings.js';

const TEMPLATE = path.join(__dirname, '..', '.env.example');

/** Every variable readSettings reads, whichever providers are chosen. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const choices: Record<string, string>[] = [
    {},
    { STT_PROVIDER: 'openai' },
    { STT_PROVIDER: 'livekit', LLM_PROVIDER: 'livekit', TTS_PROVIDER: 'livekit' },
  ];
  for (const choice of choices) {
    const values: Record<string, string> = {
      LIVEKIT_URL: 'ws://127.0.0.1:7880',
      LIVEKIT_API_KEY: 'devkey',
      LIVEKIT_API_SECRET: 'secret',
      VOICE_SERVICE_URL: 'http://127.0.0.1:3000',
      RUNTIME_API_TOKEN: 'runtime-token',
      DEEPGRAM_API_KEY: 'dg',
      OPENAI_API_KEY: 'sk',
      ...choice,
    };
    const env = new Proxy(values, {
      get: (target, name: string) => {
        read.add(name);
        return target[name];
      },
    });
    readSettings(env);
  }
  return read;
}

describe("the agent's .env.example", () => {
  const template = readEnvTemplate(TEMPLATE);

  it('names every variable the agent reads, once, and nothing else', () => {
    const names = template.map((variable) => variable.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...variablesRead()].sort());
    expect(strayTemplateLines(TEMPLATE)).toEqual([]);
  });

  it('says in one line what each one is', () => {
    expect(template.filter((variable) => !variable.comment?.trim()).map((variable) => variable.name)).toEqual([]);
  });

  it("needs only the runtime token and the default providers' keys filled in", () => {
    const env = Object.fromEntries(template.map(({ name, value }) => [name, value]));
    expect(() => readSettings(env)).toThrow(
      'Invalid configuration: RUNTIME_API_TOKEN is required; DEEPGRAM_API_KEY is required; OPENAI_API_KEY is required',
    );
    expect(() =>
      readSettings({ ...env, RUNTIME_API_TOKEN: 'x'.repeat(32), DEEPGRAM_API_KEY: 'dg', OPENAI_API_KEY: 'sk' }),
    ).not.toThrow();
  });
});
