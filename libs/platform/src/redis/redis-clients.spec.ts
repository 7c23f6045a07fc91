import { type Cluster, type Redis } from 'ioredis';
import { loadConfig } from '@app/config';
import { closeRedisClient, createRedisClient, isClusterClient } from './redis-clients';

const key = Buffer.alloc(32, 1).toString('base64');

describe('createRedisClient', () => {
  it('builds a cluster client from REDIS_CLUSTER_NODES, with the credentials and TLS on every node', async () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      REDIS_CLUSTER_NODES: 'cache-0.example.com:6379,cache-1.example.com:6379',
      REDIS_CLUSTER_TLS: 'true',
      REDIS_USERNAME: 'service',
      REDIS_PASSWORD: 'a secret',
    });
    const client = createRedisClient(config, { lazyConnect: true, maxRetriesPerRequest: null, keyPrefix: 'va:' });
    try {
      expect(isClusterClient(client)).toBe(true);
      const options = (client as Cluster).options;
      expect(options).toMatchObject({ lazyConnect: true, keyPrefix: 'va:' });
      expect(options.redisOptions).toMatchObject({
        username: 'service',
        password: 'a secret',
        tls: {},
        maxRetriesPerRequest: null,
      });
      // TLS is checked against the name the operator gave, not the address it resolves to.
      const resolved = await new Promise((resolve) =>
        options.dnsLookup!('cache-0.example.com', (_, address) => resolve(address)),
      );
      expect(resolved).toBe('cache-0.example.com');
    } finally {
      await closeRedisClient(client);
    }
  });

  it('bounds the commands of a request’s clients and every connection attempt; never a consumer’s commands', async () => {
    const config = loadConfig({ ENCRYPTION_KEY: key, REDIS_COMMAND_TIMEOUT_MS: '700', REDIS_CONNECT_TIMEOUT_MS: '900' });
    const request = createRedisClient(config, { lazyConnect: true, boundedCommands: true }) as Redis;
    const consumer = createRedisClient(config, { lazyConnect: true, maxRetriesPerRequest: null }) as Redis;
    const cluster = createRedisClient(loadConfig({ ENCRYPTION_KEY: key, REDIS_CLUSTER_NODES: 'cache-0:6379' }), {
      lazyConnect: true,
      boundedCommands: true,
    }) as Cluster;
    try {
      expect(request.options).toMatchObject({ commandTimeout: 700, connectTimeout: 900 });
      expect(consumer.options).toMatchObject({ connectTimeout: 900 });
      expect(consumer.options.commandTimeout).toBeUndefined();
      // Defaults, on each node of a cluster.
      expect(cluster.options.redisOptions).toMatchObject({ commandTimeout: 1000, connectTimeout: 5000 });
    } finally {
      await Promise.all([request, consumer, cluster].map((client) => closeRedisClient(client)));
    }
  });

  it('builds a single client from REDIS_URL when no cluster is named, its own credentials first', async () => {
    const config = loadConfig({
      ENCRYPTION_KEY: key,
      REDIS_URL: 'redis://:from-url@cache:6380/1',
      REDIS_PASSWORD: 'x',
    });
    const client = createRedisClient(config, { lazyConnect: true, enableOfflineQueue: false });
    try {
      expect(isClusterClient(client)).toBe(false);
      expect(client.options).toMatchObject({
        host: 'cache',
        port: 6380,
        db: 1,
        password: 'from-url',
        enableOfflineQueue: false,
      });
    } finally {
      await closeRedisClient(client);
    }
  });
});
