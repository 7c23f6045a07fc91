import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig, redisOptionsFromUrl } from '@app/config';

export const REDIS = Symbol('REDIS');
export const InjectRedis = () => Inject(REDIS);

/** One shared ioredis client for rate limits and health checks (BullMQ keeps its own connections). */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new Redis({ ...redisOptionsFromUrl(config.redisUrl), lazyConnect: false, maxRetriesPerRequest: 2 }),
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
