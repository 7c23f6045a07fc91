import { Logger, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { ModelUsageRepository } from '@app/database';
import { MODEL_PROVIDER, MODEL_USAGE_RECORDER, type ModelProvider, type ModelUsageRecorder } from './model-provider';
import { OpenAiModelProvider } from './openai-model-provider';
import { UnconfiguredModelProvider } from './unconfigured-model-provider';

/** The adapter the configuration asks for, said in one line at boot (the host and models, never the key). */
export function modelProviderFor(config: AppConfig, recorder: ModelUsageRecorder): ModelProvider {
  const logger = new Logger('ModelProvider');
  const settings = config.modelProvider;
  if (!settings) {
    logger.log('Model provider not configured (LLM_BASE_URL unset): no post-call analysis and no search by meaning');
    return new UnconfiguredModelProvider();
  }
  const embeddings = settings.embeddingsModel
    ? `embeddings ${settings.embeddingsModel}${settings.embeddingsDimensions ? ` (${settings.embeddingsDimensions} dimensions)` : ''}`
    : 'no embeddings model (EMBEDDINGS_MODEL unset): no search by meaning';
  logger.log(`Model provider at ${new URL(settings.baseUrl).host}: model ${settings.model}, ${embeddings}`);
  return new OpenAiModelProvider(settings, recorder);
}

/**
 * The model provider port (`MODEL_PROVIDER`), its answers' tokens recorded in `model_usage_daily`. Imported by the
 * worker (post-call analysis, document embeddings) and the API (a search's embedding); each logs its one boot line.
 */
@Module({
  providers: [
    {
      provide: MODEL_USAGE_RECORDER,
      inject: [ModelUsageRepository],
      useFactory: (usage: ModelUsageRepository): ModelUsageRecorder => ({
        record: (meter, tokens) => usage.add(meter.userId, meter.purpose, tokens),
      }),
    },
    { provide: MODEL_PROVIDER, inject: [AppConfig, MODEL_USAGE_RECORDER], useFactory: modelProviderFor },
  ],
  exports: [MODEL_PROVIDER],
})
export class ModelProviderModule {}
