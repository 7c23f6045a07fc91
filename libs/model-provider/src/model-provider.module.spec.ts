import { Logger } from '@nestjs/common';
import { loadConfig } from '@app/config';
import { modelProviderFor } from './model-provider.module';
import { OpenAiModelProvider } from './openai-model-provider';
import { UnconfiguredModelProvider } from './unconfigured-model-provider';

const key = Buffer.alloc(32, 1).toString('base64');
const recorder = { record: () => Promise.resolve() };

describe('modelProviderFor', () => {
  let lines: string[];
  beforeEach(() => {
    lines = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void lines.push(String(message)));
  });
  afterEach(() => jest.restoreAllMocks());

  it('says once at boot that no provider is configured, and answers the unconfigured port', () => {
    const provider = modelProviderFor(loadConfig({ ENCRYPTION_KEY: key }), recorder);
    expect(provider).toBeInstanceOf(UnconfiguredModelProvider);
    expect(lines).toEqual([
      'Model provider not configured (LLM_BASE_URL unset): no post-call analysis and no search by meaning',
    ]);
  });

  it("names the provider's host and models in one line, never the key", () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      LLM_BASE_URL: 'https://api.openai.com/v1',
      LLM_API_KEY: 'sk-proj-secret-never-logged',
      LLM_MODEL: 'gpt-4o-mini',
      EMBEDDINGS_MODEL: 'text-embedding-3-small',
      EMBEDDINGS_DIMENSIONS: '512',
    });
    expect(modelProviderFor(config, recorder)).toBeInstanceOf(OpenAiModelProvider);
    expect(lines).toEqual([
      'Model provider at api.openai.com: model gpt-4o-mini, embeddings text-embedding-3-small (512 dimensions)',
    ]);
  });

  it('says when there is no embeddings model', () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      LLM_MODEL: 'llama3.1',
    });
    modelProviderFor(config, recorder);
    expect(lines).toEqual([
      'Model provider at 127.0.0.1:11434: model llama3.1, no embeddings model (EMBEDDINGS_MODEL unset): no search by meaning',
    ]);
  });
});
