/** The connection settings a URL carries; accepted by ioredis and by BullMQ's connection option alike. */
export interface RedisConnectionSettings {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls?: Record<string, never>;
}

/** ioredis options from a redis:// URL; BullMQ takes options rather than a URL. */
export function redisOptionsFromUrl(url: string): RedisConnectionSettings {
  const parsed = new URL(url);
  const database = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db: database ? Number(database) : 0,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
  };
}
