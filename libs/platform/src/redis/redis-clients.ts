import Redis, { Cluster } from 'ioredis';
import { type AppConfig, redisOptionsFromUrl } from '@app/config';

/** A client of the configured Redis: one server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;

/** How a client behaves while Redis is away; each user chooses what it can afford. */
export interface RedisClientOptions {
  /** Namespace of every key the client sends (not for BullMQ, which takes its own `prefix`). */
  keyPrefix?: string;
  /** false: commands fail at once while disconnected instead of waiting for a reconnect (callers answer 503). */
  enableOfflineQueue?: boolean;
  /** null for BullMQ's consumers, which must wait out an outage rather than fail their commands. */
  maxRetriesPerRequest?: number | null;
  enableAutoPipelining?: boolean;
  /** Connect on first use (a template that BullMQ only duplicates never connects). */
  lazyConnect?: boolean;
  /**
   * A request's clients (REDIS_COMMAND_TIMEOUT_MS): a command without an answer within it fails, so a Redis that
   * hangs without closing its connections (stopped, overloaded, cut off by a partition that drops packets) is taken
   * for down within a bound, as a refused connection is at once. Never for BullMQ's consumers: their blocking reads
   * wait for seconds by design, and they must wait out an outage.
   */
  boundedCommands?: boolean;
}

/**
 * The only place a Redis connection is made: BullMQ's queues, workers and event listeners, the window counters of
 * the rate limits and the login throttle, and the health checks all take their client from here, so a deployment
 * moves between one Redis and a cluster by its environment alone.
 */
export function createRedisClient(config: AppConfig, options: RedisClientOptions = {}): RedisClient {
  const { maxRetriesPerRequest, boundedCommands, ...clientOptions } = withoutUndefined(options);
  const timeouts = config.dependencyTimeouts;
  // Per connection, so on a cluster each node's: a connection attempt that hangs is abandoned and tried again.
  const connectionOptions = withoutUndefined({
    maxRetriesPerRequest,
    connectTimeout: timeouts.redisConnectMs,
    commandTimeout: boundedCommands ? timeouts.redisCommandMs : undefined,
  });
  const cluster = config.redisCluster;
  if (!cluster) {
    return new Redis({
      ...redisOptionsFromUrl(config.redisUrl, config.redisCredentials),
      ...connectionOptions,
      ...clientOptions,
    });
  }
  return new Cluster(cluster.nodes, {
    ...clientOptions,
    // What every node connection takes: the cluster-wide settings above are the Cluster's own.
    redisOptions: withoutUndefined({
      ...connectionOptions,
      username: config.redisCredentials.username,
      password: config.redisCredentials.password,
      tls: cluster.tls ? {} : undefined,
    }),
    // Managed clusters sign their certificates for the endpoint's name: connecting by the name, not the address it
    // resolves to, keeps TLS verification on.
    ...(cluster.tls
      ? { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) }
      : {}),
  });
}

/** Unset options are left out, so nothing here overrides what the URL says or what ioredis defaults to. */
function withoutUndefined<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Whether the client speaks to a Redis Cluster (commands then go to the master that holds each key's slot). */
export function isClusterClient(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** Closes a client politely, or at once when Redis is not there to answer QUIT. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  await client.quit().catch(() => client.disconnect());
}
