import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

export interface AuthenticatedUser {
  id: number;
  name: string;
  email: string;
}

/** Who is calling, and with which credential; set by the bearer guard. */
export interface AuthContext {
  user: AuthenticatedUser;
  tokenKind: 'apiKey' | 'session';
  tokenId: number;
}

export type AuthenticatedRequest = Request & { auth?: AuthContext };

export const CurrentAuth = createParamDecorator((_data: unknown, context: ExecutionContext): AuthContext => {
  const auth = context.switchToHttp().getRequest<AuthenticatedRequest>().auth;
  if (!auth) throw new Error('CurrentAuth used on a public route');
  return auth;
});

export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthenticatedUser => {
  const auth = context.switchToHttp().getRequest<AuthenticatedRequest>().auth;
  if (!auth) throw new Error('CurrentUser used on a public route');
  return auth.user;
});

/** The bearer token of a request, or null. Only the Authorization header counts, never the query string. */
export function bearerToken(request: Request): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  return match ? match[1] : null;
}
