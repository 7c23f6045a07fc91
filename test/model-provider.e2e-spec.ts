import { ModelUsageRepository } from '@app/database';
import { MODEL_PROVIDER, type ModelProvider, type ModelUsage } from '@app/model-provider';
import { createAccount, type TestAccount } from './support/factories';
import { FakeOpenAi } from './support/openai.fake';
import { type Stack, startStack } from './support/stack';

/**
 * The model provider as the apps build it from LLM_* against the strict fake of OpenAI: every answer's tokens land in
 * the account's row of the day for the purpose, however many answers arrive at once.
 */
describe('Model provider', () => {
  let fake: FakeOpenAi;
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  let provider: ModelProvider;
  let usage: ModelUsageRepository;

  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    stack = await startStack({
      worker: false,
      env: {
        LLM_BASE_URL: fake.baseUrl,
        LLM_API_KEY: fake.apiKey,
        LLM_MODEL: 'gpt-4o-mini',
        LLM_CONCURRENCY: '3',
        EMBEDDINGS_MODEL: 'text-embedding-3-small',
      },
    });
    [owner, other] = [await createAccount(stack), await createAccount(stack)];
    provider = stack.api.get<ModelProvider>(MODEL_PROVIDER);
    usage = stack.api.get(ModelUsageRepository, { strict: false });
  });
  afterAll(async () => {
    await stack?.close();
    await fake?.close();
  });

  const today = () => new Date().toISOString().slice(0, 10);
  const sum = (answers: ModelUsage[]) => ({
    promptTokens: answers.reduce((total, each) => total + each.promptTokens, 0),
    completionTokens: answers.reduce((total, each) => total + each.completionTokens, 0),
    totalTokens: answers.reduce((total, each) => total + each.totalTokens, 0),
  });

  it("adds each answer's tokens to the account's day and purpose, answers arriving at once all counted", async () => {
    const day = today();
    const analyses = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        provider.complete({
          meter: { userId: owner.id, purpose: 'analysis' },
          messages: [{ role: 'user', content: `Summarise call number ${index}.` }],
        }),
      ),
    );
    const inputs = Array.from({ length: 2100 }, (_, index) => `passage ${index}`);
    const embedded = await provider.embed({ meter: { userId: owner.id, purpose: 'document_embeddings' }, inputs });
    const others = await provider.complete({
      meter: { userId: other.id, purpose: 'analysis' },
      messages: [{ role: 'user', content: 'Summarise.' }],
    });

    expect(await usage.days(owner.id, day, day)).toEqual([
      { day, purpose: 'analysis', requests: 12, ...sum(analyses.map((answer) => answer.usage)) },
      // Two requests: 2,100 inputs are more than one takes.
      { day, purpose: 'document_embeddings', requests: 2, ...embedded.usage },
    ]);
    expect(await usage.days(other.id, day, day)).toEqual([{ day, purpose: 'analysis', requests: 1, ...others.usage }]);
    expect(fake.maxInFlight).toBeLessThanOrEqual(3);
  });
});
