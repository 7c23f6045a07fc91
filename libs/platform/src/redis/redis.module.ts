import { Global, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { evictionPolicyProblem } from './eviction-policy';
import { closeRedisClient, createRedisClient, isClusterClient, type RedisClient } from './redis-clients';

export const REDIS = Symbol('REDIS');
export const InjectRedis = () => Inject(REDIS);

/**
 * One shared ioredis client for health checks (BullMQ and the window counters keep their own connections), or
 * null when QUEUE_BACKEND=postgres: then nothing connects to Redis at all.
 */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        if (config.queueBackend !== 'redis') return null;
        const redis = createRedisClient(config, { lazyConnect: false, maxRetriesPerRequest: 2, boundedCommands: true });
        // Without a listener ioredis prints every failed reconnect as a plain-text stack, outside the JSON log.
        const logger = new Logger('Redis');
        redis.on('error', (error: Error) => logger.warn({ error: error.message }, 'redis connection error'));
        return redis;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');

  constructor(@Inject(REDIS) private readonly redis: RedisClient | null) {}

  /**
   * Refuses to run against a Redis that may evict keys: jobs would vanish without a trace. Checked at boot, or
   * as soon as Redis first answers when it is down at boot.
   */
  async onApplicationBootstrap(): Promise<void> {
    const redis = this.redis;
    if (!redis) return;
    try {
      await this.checkEvictionPolicy(redis);
    } catch (error) {
      if (error instanceof UnsafeRedisError) throw error;
      redis.once('ready', () => {
        void this.checkEvictionPolicy(redis).catch((late: Error) => {
          if (!(late instanceof UnsafeRedisError)) return;
          this.logger.fatal(late.message);
          process.exit(1);
        });
      });
    }
  }

  /** On a cluster, every master holds some of the queues: each must keep its keys. */
  private async checkEvictionPolicy(redis: RedisClient): Promise<void> {
    const servers = isClusterClient(redis) ? (await redis.ping(), redis.nodes('master')) : [redis];
    for (const server of servers) {
      const problem = evictionPolicyProblem(await server.info('memory'));
      if (problem) throw new UnsafeRedisError(problem);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis) await closeRedisClient(this.redis);
  }
}

class UnsafeRedisError extends Error {}
