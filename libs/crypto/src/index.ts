export * from './crypto.module';
export * from './secret-box';
export * from './secret-contexts';
export * from './webhook-signing';
