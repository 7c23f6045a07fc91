import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { Errors } from '@app/contracts';
import { hashToken, parseToken, PUBLIC_ROUTE, SKIP_RATE_LIMIT } from '@app/platform';
import { RateLimiter, RateState } from '../rate-limit/rate-limiter.service';
import { AuthenticatedRequest, bearerToken } from './auth-context';
import { TokenAuthenticator } from './token-authenticator.service';

/**
 * Global guard: every route needs a valid bearer token unless marked @Public(), and every request counts against
 * one per-minute budget (RATE_LIMIT_PER_MINUTE) across all routes:
 * - an authenticated request against its credential (the API key or session token that made it, by digest);
 * - a public request, and every request whose credentials fail, against its client address. A request without a
 *   well-formed token from an address over its budget is refused without a round trip; a well-formed one is still
 *   looked up (by its digest, one indexed read), because the address's budget never refuses a valid credential.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  /** A route's markers, read once per controller and handler instead of on every request. */
  private readonly routes = new WeakMap<object, WeakMap<object, { isPublic: boolean; counted: boolean }>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: TokenAuthenticator,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { isPublic, counted } = this.route(context);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    // The client address (Express's `req.ip`, which honours `trust proxy`) is read only when it is counted.
    const address = () => `address:${request.ip}`;

    if (isPublic) {
      if (counted) this.enforce(await this.limiter.hit(address()), response);
      return true;
    }
    const token = bearerToken(request);
    const kind = token ? parseToken(token) : null;
    // Without a well-formed token there is nothing to look up: an address past its budget is refused at once.
    if (!kind) {
      this.enforce(this.limiter.knownExceeded(address()) ?? (await this.limiter.hit(address())), response);
      throw Errors.unauthenticated();
    }
    // A well-formed token is looked up even from an address past its budget: a valid credential is counted against
    // itself only, so other clients' garbage from the same address (every client, behind a load balancer) never
    // locks it out. Its budget is counted while it is looked up, under its digest (the same key for every request
    // of the credential, known before the lookup), so a request waits for one round trip, not two.
    const [auth, state] = await Promise.all([
      this.authenticator.authenticate(token!),
      counted ? this.limiter.hit(`${kind}:${hashToken(token!)}`) : undefined,
    ]);
    if (!auth) {
      this.enforce(this.limiter.knownExceeded(address()) ?? (await this.limiter.hit(address())), response);
      throw Errors.unauthenticated();
    }
    request.auth = auth;
    this.enforce(state, response);
    return true;
  }

  private route(context: ExecutionContext): { isPublic: boolean; counted: boolean } {
    const controller = context.getClass();
    const handler = context.getHandler();
    let handlers = this.routes.get(controller);
    if (!handlers) this.routes.set(controller, (handlers = new WeakMap()));
    let route = handlers.get(handler);
    if (!route) {
      const targets = [handler, controller];
      route = {
        isPublic: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true,
        counted: !this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, targets),
      };
      handlers.set(handler, route);
    }
    return route;
  }

  /** Sets the budget headers; past the budget, answers 429 with Retry-After. */
  private enforce(state: RateState | undefined, response: Response): void {
    if (!state) return;
    response.setHeader('X-RateLimit-Limit', String(state.limit));
    response.setHeader('X-RateLimit-Remaining', String(state.remaining));
    if (state.exceeded) throw Errors.tooManyAttempts(state.resetSeconds);
  }
}
