export * from './crypto.module';
export * from './secret-box';
