/** The connection settings a URL carries; accepted by ioredis and by BullMQ's connection option alike. */
export interface RedisConnectionSettings {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls?: Record<string, never>;
}

/** A Redis Cluster named by its seed nodes (REDIS_CLUSTER_NODES); the client discovers the other nodes from them. */
export interface RedisClusterSettings {
  nodes: { host: string; port: number }[];
  /** Every node is reached over TLS (REDIS_CLUSTER_TLS), as managed offerings with in-transit encryption need. */
  tls: boolean;
}

/** Credentials given apart from any URL (REDIS_USERNAME, REDIS_PASSWORD): a cluster has no single URL to hold them. */
export interface RedisCredentials {
  username?: string;
  password?: string;
}

/** ioredis options from a redis:// URL; BullMQ takes options rather than a URL. */
export function redisOptionsFromUrl(url: string, credentials: RedisCredentials = {}): RedisConnectionSettings {
  const parsed = new URL(url);
  const database = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    // The URL's own credentials win: REDIS_PASSWORD only fills in what it leaves out.
    username: parsed.username ? decodeURIComponent(parsed.username) : credentials.username,
    password: parsed.password ? decodeURIComponent(parsed.password) : credentials.password,
    db: database ? Number(database) : 0,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
  };
}

/** Seed nodes from validated `host:port` entries (an IPv6 host in brackets). */
export function redisClusterNodes(entries: string[]): RedisClusterSettings['nodes'] {
  return entries.map((entry) => {
    const separator = entry.lastIndexOf(':');
    return { host: entry.slice(0, separator).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(separator + 1)) };
  });
}
