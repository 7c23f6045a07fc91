import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Errors } from '@app/contracts';
import { PUBLIC_ROUTE } from '@app/platform';
import { AuthenticatedRequest, bearerToken } from './auth-context';
import { TokenAuthenticator } from './token-authenticator.service';

/** Global guard: every route needs a valid bearer token unless marked @Public(). */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: TokenAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = bearerToken(request);
    const auth = token ? await this.authenticator.authenticate(token) : null;
    if (!auth) throw Errors.unauthenticated();
    request.auth = auth;
    return true;
  }
}
