import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type AppConfig } from '@app/config';
import { type RateWindowsRepository } from '@app/database';
import { closeRedisClient, createRedisClient, type RedisClient } from '../redis/redis-clients';
import { withTimeout } from '../with-timeout';
import { errorMessage } from '../error-message';

/** A counter's value in its window, and the milliseconds until the window ends. */
export interface WindowCount {
  count: number;
  ttlMs: number;
}

/**
 * Fixed-window counters shared by every API process (rate limits, the login throttle). A window starts with a
 * key's first hit and lasts `windowMs`; keys are namespaced by QUEUE_PREFIX. Redis keeps them when the queues are
 * on Redis; with QUEUE_BACKEND=postgres they are rows in Postgres, so no deployment needs Redis for them and
 * replicas still share one count (a per-process count would multiply every limit by the number of replicas).
 */
export abstract class WindowCounters {
  /** Adds one to the key's count and returns it with the time left in its window. */
  abstract hit(key: string, windowMs: number): Promise<WindowCount>;
  /** The key's count in its current window (0 when none is open). */
  abstract peek(key: string): Promise<WindowCount>;
  abstract clear(key: string): Promise<void>;
}

type CounterRedis = RedisClient & { windowHit(key: string, windowMs: number): Promise<[number, number]> };

/**
 * One round trip a hit, shared by the hits sent in the same tick: the script is loaded once and then called by its
 * digest (ioredis sends EVALSHA). The script touches its one key only, so on a cluster it runs on that key's master.
 */
export class RedisWindowCounters extends WindowCounters implements OnApplicationShutdown {
  private readonly redis: CounterRedis;
  private readonly timeoutMs: number;

  constructor(config: AppConfig, onError: (error: Error) => void) {
    super();
    this.timeoutMs = config.dependencyTimeouts.redisCommandMs;
    this.redis = createRedisClient(config, {
      keyPrefix: `${config.queuePrefix}:`,
      // Fail fast while Redis is away instead of queueing commands behind a request, and within a bound while it hangs.
      enableOfflineQueue: false,
      boundedCommands: true,
      maxRetriesPerRequest: 1,
      // Hits of requests arriving together leave in one write: under load, fewer socket writes than requests.
      enableAutoPipelining: true,
    }) as CounterRedis;
    this.redis.on('error', onError);
    this.redis.defineCommand('windowHit', {
      numberOfKeys: 1,
      lua: `local count = redis.call('INCR', KEYS[1])
            if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
            return {count, redis.call('PTTL', KEYS[1])}`,
    });
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttlMs] = await this.bounded(this.redis.windowHit(key, windowMs));
    return { count, ttlMs };
  }

  async peek(key: string): Promise<WindowCount> {
    const [count, ttlMs] = await this.bounded(Promise.all([this.redis.get(key), this.redis.pttl(key)]));
    return { count: Number(count ?? 0), ttlMs: Math.max(0, ttlMs) };
  }

  async clear(key: string): Promise<void> {
    await this.bounded(this.redis.del(key));
  }

  /**
   * A command's own timeout starts when it is sent, and auto-pipelined commands leave one batch at a time: behind a
   * batch that Redis does not answer, a request would wait up to twice the bound. Its wait is bounded from the call.
   */
  private bounded<T>(command: Promise<T>): Promise<T> {
    return withTimeout(command, this.timeoutMs, 'Command timed out');
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.redis);
  }
}

/** How often one process deletes windows that ended; a row left over is ignored by every read anyway. */
const PURGE_INTERVAL_MS = 60_000;

/**
 * Rows of the unlogged `rate_windows` table, through libs/database's `RateWindowsRepository`: one statement a hit,
 * keys namespaced by QUEUE_PREFIX as on Redis.
 */
export class PostgresWindowCounters extends WindowCounters implements OnApplicationShutdown {
  private readonly logger = new Logger('WindowCounters');
  private readonly prefix: string;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly windows: RateWindowsRepository,
    config: AppConfig,
  ) {
    super();
    this.prefix = `${config.queuePrefix}:`;
    this.timer = setInterval(() => void this.purge(), PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.windows.hit(this.prefix + key, windowMs);
  }

  peek(key: string): Promise<WindowCount> {
    return this.windows.peek(this.prefix + key);
  }

  clear(key: string): Promise<void> {
    return this.windows.clear(this.prefix + key);
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async purge(): Promise<void> {
    try {
      await this.windows.purgeEnded();
    } catch (error) {
      this.logger.warn({ error: errorMessage(error) }, 'could not purge ended rate windows');
    }
  }
}
