import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { Errors } from '@app/contracts';
import { WindowCounters } from '@app/platform';

const WINDOW_SECONDS = 60;

/**
 * Counts failed logins per email and client address, as Laravel does: too many failures within a minute
 * lock that pair out until the minute ends; a successful login clears the count. The counts live in the shared
 * WindowCounters, so every API process sees the same ones.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    private readonly config: AppConfig,
    private readonly counters: WindowCounters,
  ) {}

  private key(email: string, address: string): string {
    const digest = createHash('sha256').update(`${email.toLowerCase()}|${address}`).digest('hex');
    return `login-attempts:${digest}`;
  }

  async assertAllowed(email: string, address: string): Promise<void> {
    const { count, ttlMs } = await this.counters.peek(this.key(email, address));
    if (count >= this.config.loginAttemptsPerMinute) {
      throw Errors.tooManyAttempts(ttlMs > 0 ? Math.ceil(ttlMs / 1000) : WINDOW_SECONDS);
    }
  }

  async recordFailure(email: string, address: string): Promise<void> {
    await this.counters.hit(this.key(email, address), WINDOW_SECONDS * 1000);
  }

  async clear(email: string, address: string): Promise<void> {
    await this.counters.clear(this.key(email, address));
  }
}
