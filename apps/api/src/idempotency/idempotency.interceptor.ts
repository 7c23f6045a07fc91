import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import type { Request, Response } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { ValidationFailed } from '@app/contracts';
import type { AuthenticatedRequest } from '../auth/auth-context';
import { IDEMPOTENCY_LEASE_SECONDS, IdempotencyStore, requestFingerprint } from './idempotency.store';
import { IdempotentCreates } from './idempotent-creates';

const HEADER = 'idempotency-key';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * A POST route creates, or starts work that outlives it (`202`: an import, a refresh), unless it declares another
 * status (`@HttpCode(200)` on login, logout, a tool's test, ...).
 */
export function isCreateRoute(handler: object): boolean {
  const status: number | undefined = Reflect.getMetadata(HTTP_CODE_METADATA, handler);
  return status === undefined || status === HttpStatus.CREATED || status === HttpStatus.ACCEPTED;
}

/**
 * `Idempotency-Key` on POST routes that create: a client that retries a create with the same key and body within 24 hours
 * gets the first answer again instead of a second resource; the same key with another body is 422; duplicates
 * sent at once create once (the later ones wait for the first and replay its answer). Only successful answers
 * are kept (sealed): after an error the key is free again, so a corrected retry can succeed. A key whose request
 * died with its process is taken over by the next retry once its lease lapses (seconds, not the day): it runs the
 * create again if the dead one had made nothing, and answers what it had made otherwise (`IdempotentCreates`).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly creates: IdempotentCreates,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = request.headers[HEADER];
    if (request.method !== 'POST' || key === undefined || !request.auth || !isCreateRoute(context.getHandler())) {
      return next.handle();
    }
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw ValidationFailed.field(
        'Idempotency-Key',
        'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
      );
    }
    return from(this.handle(request, context.switchToHttp().getResponse<Response>(), key, next));
  }

  private async handle(request: AuthenticatedRequest, response: Response, key: string, next: CallHandler) {
    const user = request.auth!.user;
    const fingerprint = requestFingerprint(request as Request);
    const claim = await this.store.claim(user.id, key, fingerprint);
    switch (claim.kind) {
      case 'mismatch':
        throw ValidationFailed.field(
          'Idempotency-Key',
          'The Idempotency-Key has already been used for a different request.',
        );
      case 'replay':
        response.status(claim.status).setHeader('Idempotent-Replayed', 'true');
        return claim.body;
      case 'recover':
        response.setHeader('Idempotent-Replayed', 'true');
        return this.whileHeld(user.id, key, response, () => this.creates.recover(user, key, claim.created));
      case 'first':
        return this.whileHeld(user.id, key, response, () =>
          IdempotentCreates.runUnder(user.id, key, () => lastValueFrom(next.handle(), { defaultValue: undefined })),
        );
    }
  }

  /** Runs the request's work holding its key, and keeps its answer, or frees the key after an error. */
  private async whileHeld(userId: number, key: string, response: Response, work: () => Promise<unknown>) {
    // The lease lapses only if this process dies: then a retry takes the key over instead of waiting a day.
    const renewal = setInterval(
      () => void this.store.renew(userId, key).catch(() => undefined),
      (IDEMPOTENCY_LEASE_SECONDS * 1000) / 3,
    ).unref();
    try {
      const body = await work();
      await this.store.complete(userId, key, response.statusCode, body);
      return body;
    } catch (error) {
      await this.store.release(userId, key);
      throw error;
    } finally {
      clearInterval(renewal);
    }
  }
}
