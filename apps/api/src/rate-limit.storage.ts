import { Logger } from '@nestjs/common';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

/**
 * Rate-limit counters in Redis that fail open: while Redis is unreachable requests are not limited (and say so
 * in the log) rather than all refused, so the API degrades to what its other dependencies allow.
 */
export class FailOpenRedisThrottlerStorage extends ThrottlerStorageRedisService {
  private readonly logger = new Logger('RateLimit');

  override async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    try {
      return await super.increment(key, ttl, limit, blockDuration, throttlerName);
    } catch (error) {
      this.logger.warn({ error: (error as Error).message }, 'rate limiting skipped: Redis unavailable');
      return { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
    }
  }
}
