import { Global, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { SecretBox } from './secret-box';

/** Provides the SecretBox keyed with the configured ENCRYPTION_KEY to every module. */
@Global()
@Module({
  providers: [
    { provide: SecretBox, inject: [AppConfig], useFactory: (config: AppConfig) => new SecretBox(config.encryptionKey) },
  ],
  exports: [SecretBox],
})
export class CryptoModule {}
