import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { Errors } from '@app/contracts';
import { WindowCounters } from '@app/platform';

const WINDOW_SECONDS = 60;

/**
 * Counts login attempts per email and client address, as Laravel's throttle does: past the limit within a minute,
 * that pair is locked out until the minute ends; a successful login clears the count. An attempt is counted before
 * its password is checked, in one atomic step, so however many arrive at once at most the limit are ever verified.
 * The counts live in the shared WindowCounters, so every API process sees the same ones.
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

  /** Counts an attempt; refuses it (429) when it is past the limit, before any password is checked. */
  async admit(email: string, address: string): Promise<void> {
    const { count, ttlMs } = await this.counters.hit(this.key(email, address), WINDOW_SECONDS * 1000);
    if (count > this.config.loginAttemptsPerMinute) {
      throw Errors.tooManyAttempts(ttlMs > 0 ? Math.ceil(ttlMs / 1000) : WINDOW_SECONDS);
    }
  }

  async clear(email: string, address: string): Promise<void> {
    await this.counters.clear(this.key(email, address));
  }
}
