import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { FileUploadInterceptor } from '../http/file-upload.interceptor';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStore } from './idempotency.store';

/**
 * Global request interceptors, in the order they run: multipart uploads are parsed first so that the
 * Idempotency-Key check fingerprints the fields and file a create really received.
 */
@Module({
  providers: [
    IdempotencyStore,
    { provide: APP_INTERCEPTOR, useClass: FileUploadInterceptor },
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
  ],
})
export class RequestInterceptorsModule {}
