import { createHash, timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig } from '@app/config';
import { Errors } from '@app/contracts';
import { bearerToken } from '../auth/auth-context';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The voice runtime's routes: only `Authorization: Bearer <RUNTIME_API_TOKEN>` opens them (compared in constant
 * time), never a user's token. Without RUNTIME_API_TOKEN configured they are closed.
 */
@Injectable()
export class RuntimeTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(config: AppConfig) {
    this.expected = config.runtimeApiToken ? digest(config.runtimeApiToken) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    const token = bearerToken(context.switchToHttp().getRequest<Request>());
    if (!this.expected || !token || !timingSafeEqual(digest(token), this.expected)) throw Errors.unauthenticated();
    return true;
  }
}
