import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import type { RuntimeCredential } from '@app/calls';
import { AppConfig } from '@app/config';
import { Errors, TERMINAL_CALL_STATUSES } from '@app/contracts';
import { RuntimeCallsRepository } from '@app/database';
import { hashToken, parseToken } from '@app/platform';
import { bearerToken } from '../auth/auth-context';

const digest = (text: string) => createHash('sha256').update(text).digest();

const CALL_TOKEN_ACCEPTED = 'runtime:call-token-accepted';

/**
 * What a call token may do on a route of its call: until the call's final write, or also a repeat of that write;
 * `until-final-write-checked-by-write` is `until-final-write` on a route whose own statement refuses a call whose
 * status is final (the events), so the guard need not ask again once it has seen the token open that call.
 */
type CallTokenRoute = 'until-final-write' | 'until-final-write-checked-by-write' | 'final-write';

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
 *
 * A runtime posts its turns several times a second: on the routes whose own statement refuses a finished call, a
 * token already seen to open that call is let through from memory until it expires (at most `REMEMBERED_FOR_MS`),
 * which spares every turn a statement. The memory holds the token's SHA-256 only, as the table does; a token never
 * stops opening its call before it expires except by the call's final write, which those statements check.
 */
@Injectable()
export class RuntimeTokenGuard implements CanActivate {
  private readonly expected?: Buffer;
  /** `<token hash>:<external id>` to when the token stops opening that call, in ms since the epoch. */
  private readonly opened = new LRUCache<string, number>({ max: REMEMBERED_TOKENS });

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
      const tokenHash = hashToken(token);
      const key = `${tokenHash}:${externalId}`;
      const checkedByWrite = route === 'until-final-write-checked-by-write';
      if (checkedByWrite && (this.opened.get(key) ?? 0) > Date.now()) {
        request.runtimeCredential = 'call-token';
        return true;
      }
      const found = await this.calls.callTokenStateByExternalId(tokenHash, externalId, TERMINAL_CALL_STATUSES);
      if (found?.state === 'open' || (found?.state === 'finished' && route === 'final-write')) {
        if (checkedByWrite) this.opened.set(key, Math.min(found.expiresAt.getTime(), Date.now() + REMEMBERED_FOR_MS));
        request.runtimeCredential = 'call-token';
        return true;
      }
    }
    throw Errors.unauthenticated();
  }
}

/** Calls in progress at once on one API process, with room to spare; the least recently used is forgotten first. */
const REMEMBERED_TOKENS = 20_000;
/** How long a token seen to open its call is believed without asking again (it cannot be revoked meanwhile). */
const REMEMBERED_FOR_MS = 10 * 60_000;
