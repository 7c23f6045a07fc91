export * as Rule from './rules';
export * from './validation-messages';
export * from './input-normaliser';
export * from './data-keys';
