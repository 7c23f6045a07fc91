export * from './embedding-batches';
export * from './model-provider';
export * from './model-provider.module';
export * from './openai-model-provider';
export * from './unconfigured-model-provider';
