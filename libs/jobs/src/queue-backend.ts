import { Logger } from '@nestjs/common';
import {
  createPostgresBackend,
  Queue,
  QueueEvents,
  Worker,
  type BackendFactory,
  type IQueueBackend,
  type PostgresQueueBackend,
  type Processor,
  type WorkerOptions,
} from 'bullmq';
import type { AppConfig } from '@app/config';
import { closeRedisClient, createRedisClient, type RedisClient, type RedisClientOptions } from '@app/platform';

/**
 * The PostgreSQL schema, inside DATABASE_URL's database, where BullMQ's PostgreSQL backend keeps its tables. It
 * creates and migrates them itself (under an advisory lock, so processes starting together do not race).
 */
export const POSTGRES_QUEUE_SCHEMA = 'bullmq';

/**
 * Connections a producer's queue may hold on Postgres: adds are single statements, and each queue has a pool of
 * its own, so a small one keeps a process with six queues well inside the server's connection limit.
 */
const PRODUCER_POOL_SIZE = 2;

/**
 * Removes a job only if no worker holds it. BullMQ's PostgreSQL `remove` reads the job's lock and deletes the job in
 * two statements, with the row free between them: a worker claiming the job meanwhile (a delayed job that just came
 * due) had it deleted under it, and the attempt under way went on with no job, writing what it wrote after the
 * removal had been reported done. On Redis the check and the delete are one script, and `Job.remove` throws for a
 * job a worker holds, as BullMQ documents. Locking the row first, in the same statement, makes both see one state: a
 * claim being committed is waited for and the removal is then refused; a claim that comes later finds no job.
 * Only the job's own row is locked: the service adds no flows, so no child of it can be claimed meanwhile.
 */
const REMOVE_UNLESS_HELD = `
  WITH held AS MATERIALIZED (SELECT id FROM job WHERE queue = $1 AND id = $2 FOR UPDATE)
  SELECT remove($1, $2, $3) AS n FROM held`;

/** Makes a PostgreSQL backend, and the backends of other queues it makes, remove jobs as `REMOVE_UNLESS_HELD`. */
function removingUnlessHeld(backend: PostgresQueueBackend): PostgresQueueBackend {
  const forQueue = backend.forQueue.bind(backend);
  backend.forQueue = (queueName, prefix) => removingUnlessHeld(forQueue(queueName, prefix) as PostgresQueueBackend);
  backend.remove = async (jobId, removeChildren) => {
    await backend.connection.waitUntilReady();
    const { rows } = await backend.connection.pool.query<{ n: number }>(REMOVE_UNLESS_HELD, [
      backend.qualifiedName,
      jobId,
      removeChildren,
    ]);
    // No row: no such job, which BullMQ's own function answers with 0 too.
    return rows[0]?.n ?? 0;
  };
  return backend;
}

type AnyQueue = Queue<any, any, string, any, any, string, IQueueBackend, any>;
type AnyWorker = Worker<any, any, string, IQueueBackend, any, any>;

/**
 * BullMQ uses a client it is handed as it is (a worker's blocking connection is its own duplicate) and leaves it
 * open on close: the queue or worker built on it closes it.
 */
function closingClientWith<T extends { close(force?: boolean): Promise<void>; disconnect(): Promise<void> }>(
  owner: T,
  client: RedisClient,
): T {
  const close = owner.close.bind(owner);
  const disconnect = owner.disconnect.bind(owner);
  owner.close = async (force?: boolean) => {
    try {
      await close(force);
    } finally {
      await closeRedisClient(client);
    }
  };
  owner.disconnect = async () => {
    try {
      await disconnect();
    } finally {
      client.disconnect();
    }
  };
  return owner;
}

/**
 * Builds BullMQ queues, workers and event listeners on the configured backend: Redis (keys under QUEUE_PREFIX) or
 * PostgreSQL (the `bullmq` schema of DATABASE_URL). It is the only code that knows which, so producers, the
 * worker runner and the job handlers stay the same on both. Every instance gets an error listener: an emitter's
 * `error` without one is thrown, and a worker left without one has looped on connection errors until the heap
 * ran out.
 */
export class QueueBackend {
  private readonly logger = new Logger('Queues');

  constructor(private readonly config: AppConfig) {}

  get kind(): AppConfig['queueBackend'] {
    return this.config.queueBackend;
  }

  createQueue(name: string): Queue {
    const queue: AnyQueue =
      this.kind === 'postgres'
        ? new Queue(name, { connection: this.postgresConnection(PRODUCER_POOL_SIZE) }, this.postgresFactory())
        : this.onRedis(
            // Producers fail fast while Redis is away (the caller gets a 503) instead of queueing commands, and within
            // REDIS_COMMAND_TIMEOUT_MS while it hangs.
            { enableOfflineQueue: false, boundedCommands: true },
            (connection) => new Queue(name, { prefix: this.redisPrefix(name), connection }),
          );
    queue.on('error', (error: Error) => this.logger.warn({ queue: name, error: error.message }, 'queue error'));
    return queue as Queue;
  }

  createWorker(name: string, processor: Processor, options: Omit<WorkerOptions, 'connection' | 'prefix'>): Worker {
    const worker: AnyWorker =
      this.kind === 'postgres'
        ? new Worker(
            name,
            processor,
            // One connection per job in hand, plus one for fetching and lock renewal.
            { ...options, connection: this.postgresConnection((options.concurrency ?? 1) + 1) },
            this.postgresFactory(),
          )
        : this.onRedis(
            { maxRetriesPerRequest: null },
            (connection) => new Worker(name, processor, { ...options, prefix: this.redisPrefix(name), connection }),
          );
    worker.on('error', (error: Error) => this.logger.error({ queue: name, error: error.message }, 'worker error'));
    return worker as Worker;
  }

  /** Listens to a queue's job events (completed, failed...), e.g. to wait for one job's outcome. */
  createQueueEvents(name: string): QueueEvents {
    const events: QueueEvents<any, IQueueBackend, any> =
      this.kind === 'postgres'
        ? new QueueEvents(name, { connection: this.postgresConnection(1) }, this.postgresFactory())
        : // BullMQ reads events on a duplicate of the client it is given: a template that never connects.
          new QueueEvents(name, {
            prefix: this.redisPrefix(name),
            connection: createRedisClient(this.config, { maxRetriesPerRequest: null, lazyConnect: true }),
          });
    events.on('error', (error: Error) => this.logger.warn({ queue: name, error: error.message }, 'queue events error'));
    return events as QueueEvents;
  }

  /** Where the jobs live, for health reports: never the credentials. */
  describe(): { backend: AppConfig['queueBackend']; location: string } {
    const cluster = this.config.redisCluster;
    if (this.kind === 'redis' && cluster) {
      const nodes = cluster.nodes.map(({ host, port }) => `${host}:${port}`).join(',');
      return { backend: this.kind, location: `cluster ${nodes} prefix ${this.redisPrefix('<queue>')}` };
    }
    const url = new URL(this.kind === 'postgres' ? this.config.databaseUrl : this.config.redisUrl);
    const location =
      this.kind === 'postgres'
        ? `${url.host}${url.pathname} schema ${POSTGRES_QUEUE_SCHEMA}`
        : `${url.host} prefix ${this.config.queuePrefix}`;
    return { backend: this.kind, location };
  }

  /**
   * The key prefix of one queue. On a cluster, BullMQ's scripts touch many keys of a queue at once, which Redis
   * allows only within one hash slot: the prefix is a hash tag. One tag per queue (not one for all) lets the
   * queues land on different masters, so their load spreads instead of all of it falling on one master.
   */
  redisPrefix(queueName: string): string {
    return this.config.redisCluster ? `{${this.config.queuePrefix}:${queueName}}` : this.config.queuePrefix;
  }

  private onRedis<T extends AnyQueue | AnyWorker>(options: RedisClientOptions, build: (client: RedisClient) => T): T {
    const client = createRedisClient(this.config, options);
    return closingClientWith(build(client), client);
  }

  private postgresConnection(max: number) {
    return { connectionString: this.config.databaseUrl, schema: POSTGRES_QUEUE_SCHEMA, max, migrate: true };
  }

  private postgresFactory(): BackendFactory<IQueueBackend, any> {
    return ((name, options, factoryOptions) =>
      removingUnlessHeld(createPostgresBackend(name, options, factoryOptions))) as BackendFactory<IQueueBackend, any>;
  }
}
