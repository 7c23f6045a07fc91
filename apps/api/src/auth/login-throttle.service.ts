import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '@app/config';
import { Errors } from '@app/contracts';
import { InjectRedis } from '@app/platform';

const WINDOW_SECONDS = 60;

/**
 * Counts failed logins per email and client address, as Laravel does: too many failures within a minute
 * lock that pair out until the minute ends; a successful login clears the count.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    private readonly config: AppConfig,
    @InjectRedis() private readonly redis: Redis,
  ) {}

  private key(email: string, address: string): string {
    const digest = createHash('sha256').update(`${email.toLowerCase()}|${address}`).digest('hex');
    return `${this.config.queuePrefix}:login-attempts:${digest}`;
  }

  async assertAllowed(email: string, address: string): Promise<void> {
    const key = this.key(email, address);
    const [attempts, ttl] = await Promise.all([this.redis.get(key), this.redis.ttl(key)]);
    if (Number(attempts ?? 0) >= this.config.loginAttemptsPerMinute) {
      throw Errors.tooManyAttempts(ttl > 0 ? ttl : WINDOW_SECONDS);
    }
  }

  async recordFailure(email: string, address: string): Promise<void> {
    const key = this.key(email, address);
    await this.redis.multi().incr(key).expire(key, WINDOW_SECONDS, 'NX').exec();
  }

  async clear(email: string, address: string): Promise<void> {
    await this.redis.del(this.key(email, address));
  }
}
