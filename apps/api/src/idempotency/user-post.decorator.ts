import { Post as NestPost } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { FileUploadInterceptor } from '../http/file-upload.interceptor';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/** What every POST route runs first, in this order (see RequestInterceptorsModule). */
export const POST_ROUTE_INTERCEPTORS = [FileUploadInterceptor, IdempotencyInterceptor] as const;

/**
 * A POST route of the user API: Nest's `@Post()`, plus the multipart upload and `Idempotency-Key` interceptors (an
 * idempotency key is the account's, so the voice runtime's routes use Nest's own `@Post()`). They are bound to
 * POST routes rather than registered globally because only a POST can use them, and a route with no interceptor
 * skips Nest's interceptor chain (an RxJS pipeline and an async-context bind per request), which is a measurable
 * share of a cheap GET. They go before any interceptor the route declares itself, wherever its decorator sits,
 * so a route's own interceptors see the parsed upload and never a replayed answer.
 */
export function UserPost(path?: string | string[]): MethodDecorator {
  return (target, key, descriptor) => {
    NestPost(path)(target, key, descriptor);
    const declared: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, descriptor.value as object) ?? [];
    Reflect.defineMetadata(
      INTERCEPTORS_METADATA,
      [...POST_ROUTE_INTERCEPTORS, ...declared],
      descriptor.value as object,
    );
    return descriptor;
  };
}
