import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppConfig } from '@app/config';
import { Errors } from '@app/contracts';
import { CallsRepository } from '@app/database';
import { hashToken, parseToken } from '@app/platform';
import { bearerToken } from '../auth/auth-context';

const digest = (text: string) => createHash('sha256').update(text).digest();

const CALL_TOKEN_ACCEPTED = 'runtime:call-token-accepted';

/** The route's call (its `:externalId`) may also be opened with a call token its session handed out. */
export const CallTokenAccepted = () => SetMetadata(CALL_TOKEN_ACCEPTED, true);

/**
 * The voice runtime's routes: `Authorization: Bearer <RUNTIME_API_TOKEN>` opens all of them (compared in constant
 * time), never a user's token. A call token (`vrc_...`) opens only the routes marked `CallTokenAccepted` of its own
 * call, until it expires; anything else is 401, exactly like a wrong token, so a token says nothing about other
 * calls. Without RUNTIME_API_TOKEN configured no session can hand a call token out, and the routes are closed.
 */
@Injectable()
export class RuntimeTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(
    config: AppConfig,
    private readonly reflector: Reflector,
    private readonly calls: CallsRepository,
  ) {
    this.expected = config.runtimeApiToken ? digest(config.runtimeApiToken) : undefined;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const token = bearerToken(request);
    if (!this.expected || !token) throw Errors.unauthenticated();
    if (timingSafeEqual(digest(token), this.expected)) return true;
    const callRoute = this.reflector.getAllAndOverride<boolean>(CALL_TOKEN_ACCEPTED, [
      context.getHandler(),
      context.getClass(),
    ]);
    const externalId = request.params.externalId;
    if (
      callRoute &&
      typeof externalId === 'string' &&
      parseToken(token) === 'call' &&
      (await this.calls.tokenOpensByExternalId(hashToken(token), externalId))
    ) {
      return true;
    }
    throw Errors.unauthenticated();
  }
}
