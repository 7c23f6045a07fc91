export * from './data-source-options';
export * from './database.module';
export * from './entities';
export * from './migrations';
export * from './tenant.repository';
export { SEEDED_LANGUAGES } from './migrations/1763800000001-languages';
export * from './knowledgebase-summaries';
export * from './query-errors';
export * from './call-outcomes';
