import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { RuntimeCredential } from '@app/calls';
import { AppConfig } from '@app/config';
import { Errors, TERMINAL_CALL_STATUSES } from '@app/contracts';
import { RuntimeCallsRepository } from '@app/database';
import { hashToken, parseToken } from '@app/platform';
import { bearerToken } from '../auth/auth-context';

const digest = (text: string) => createHash('sha256').update(text).digest();

const CALL_TOKEN_ACCEPTED = 'runtime:call-token-accepted';

/** What a call token may do on a route of its call: until the call's final write, or also a repeat of that write. */
type CallTokenRoute = 'until-final-write' | 'final-write';

/**
 * The route's call (its `:externalId`) may also be opened with a call token its session handed out, until the
 * call's final write; `final-write` marks the route that writes it, which the token may still call to repeat that
 * write (its service tells a repeat from a change).
 */
export const CallTokenAccepted = (route: CallTokenRoute = 'until-final-write') =>
  SetMetadata(CALL_TOKEN_ACCEPTED, route);

type RuntimeRequest = Request & { runtimeCredential?: RuntimeCredential };

/** Which of the runtime's credentials opened the request (set by `RuntimeTokenGuard`). */
export const RuntimeCaller = createParamDecorator((_data: unknown, context: ExecutionContext): RuntimeCredential => {
  const credential = context.switchToHttp().getRequest<RuntimeRequest>().runtimeCredential;
  if (!credential) throw new Error('RuntimeCaller used on a route RuntimeTokenGuard does not guard');
  return credential;
});

/**
 * The voice runtime's routes: `Authorization: Bearer <RUNTIME_API_TOKEN>` opens all of them (compared in constant
 * time), never a user's token. A call token (`vrc_...`) opens only the routes marked `CallTokenAccepted` of its own
 * call, until it expires, and once the call's status is final only its final write's route; anything else is 401,
 * exactly like a wrong token, so a token says nothing about other calls. One statement decides, the call's state
 * with the token's. Without RUNTIME_API_TOKEN configured no session can hand a call token out, and the routes are
 * closed.
 */
@Injectable()
export class RuntimeTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(
    config: AppConfig,
    private readonly reflector: Reflector,
    private readonly calls: RuntimeCallsRepository,
  ) {
    this.expected = config.runtimeApiToken ? digest(config.runtimeApiToken) : undefined;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RuntimeRequest>();
    const token = bearerToken(request);
    if (!this.expected || !token) throw Errors.unauthenticated();
    if (timingSafeEqual(digest(token), this.expected)) {
      request.runtimeCredential = 'runtime-token';
      return true;
    }
    const route = this.reflector.getAllAndOverride<CallTokenRoute | undefined>(CALL_TOKEN_ACCEPTED, [
      context.getHandler(),
      context.getClass(),
    ]);
    const externalId = request.params.externalId;
    if (route && typeof externalId === 'string' && parseToken(token) === 'call') {
      const state = await this.calls.callTokenStateByExternalId(hashToken(token), externalId, TERMINAL_CALL_STATUSES);
      if (state === 'open' || (state === 'finished' && route === 'final-write')) {
        request.runtimeCredential = 'call-token';
        return true;
      }
    }
    throw Errors.unauthenticated();
  }
}
