import { Global, Module } from '@nestjs/common';
import { IdempotencyStore } from './idempotency.store';
import { IdempotentCreates } from './idempotent-creates';

/**
 * What the POST route interceptors need, available to every controller's module: the interceptors themselves are
 * bound by the `UserPost` decorator of `user-post.decorator.ts` (multipart uploads are parsed first, so that the
 * Idempotency-Key check fingerprints the fields and file a create really received). The services that create
 * record what they make with `IdempotentCreates`, and give it their recovery.
 */
@Global()
@Module({
  providers: [IdempotencyStore, IdempotentCreates],
  exports: [IdempotencyStore, IdempotentCreates],
})
export class RequestInterceptorsModule {}
