import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { Request } from 'express';
import { hashToken } from '@app/platform';
import { bearerToken } from './auth/auth-context';

/**
 * Rate limit per credential: requests with a bearer token count against that token (by hash, so no secret
 * reaches Redis), others against the client address.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    const token = bearerToken(request as unknown as Request);
    return token ? `token:${hashToken(token)}` : `ip:${(request as unknown as Request).ip}`;
  }
}
