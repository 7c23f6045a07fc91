import Redis from 'ioredis';
import { dropDatabase } from '../../libs/database/src/data-source-options';
import { queueBackend, REDIS_CLUSTER_NODES, REDIS_URL } from './test-environment';

export default async function globalTeardown(): Promise<void> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  const prefix = process.env.TEST_QUEUE_PREFIX;
  try {
    // On the postgres backend the jobs were in this run's database, dropped here; Redis was never used.
    if (databaseUrl) await dropDatabase(databaseUrl);
    // A run's own cluster goes with all its keys when the services stop.
    if (prefix && queueBackend() === 'redis' && !REDIS_CLUSTER_NODES()) {
      const redis = new Redis(REDIS_URL);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    }
  } finally {
    await (globalThis as { stopLocalServices?: () => Promise<void> }).stopLocalServices?.();
  }
}
