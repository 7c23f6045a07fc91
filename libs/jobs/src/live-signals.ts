import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Client, escapeIdentifier } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { closeRedisClient, createRedisClient, type RedisClient } from '@app/platform';

/** Something about one call was stored: its events from `fromId` on (0: the call itself changed, e.g. it ended). */
export interface CallSignal {
  callId: number;
  fromId: number;
}

type Listener = (signal: CallSignal) => void;

/** PostgreSQL's limit on a channel's name (NAMEDATALEN - 1). */
const MAX_CHANNEL_BYTES = 63;
/** How long a lost LISTEN connection waits before connecting again. */
const RECONNECT_MS = 1000;

/**
 * Tells every API process that a call's rows changed, through the queue backend's pub/sub: Redis PUBLISH on the
 * Redis backend, PostgreSQL NOTIFY on the Postgres one, never one process's memory. A signal only says where to look;
 * the rows in Postgres are the truth, so a lost signal delays a stream (until its next periodic read) and never loses
 * or duplicates what it delivers. Publishing never fails its caller: the rows are stored either way.
 *
 * On the Postgres backend a hot statement may notify itself (`notifyChannel`, with `pg_notify(channel,
 * '<callId>:<fromId>')`), which costs no round trip of its own; on Redis it is one PUBLISH after the commit.
 * The subscribing connection is made on first use, so a process that only publishes (the worker) never holds one.
 */
@Injectable()
export class LiveSignals implements OnApplicationShutdown {
  private readonly logger = new Logger('LiveSignals');
  private readonly channel: string;
  private readonly listeners = new Map<number, Set<Listener>>();
  private publisher?: RedisClient;
  private subscriber?: RedisClient;
  private listening?: Client;
  /** Settles once this process receives the channel's signals (or could not, which the periodic reads cover). */
  private ready?: Promise<void>;
  private closed = false;

  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
  ) {
    const name = `${config.queuePrefix}:call-signals`;
    this.channel =
      Buffer.byteLength(name) <= MAX_CHANNEL_BYTES
        ? name
        : `call-signals:${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
  }

  /** The channel a statement notifies itself on the Postgres backend; null on Redis (publish after the commit). */
  get notifyChannel(): string | null {
    return this.config.queueBackend === 'postgres' ? this.channel : null;
  }

  /** Signals the call's change to every process; a failure is logged, never thrown. */
  async publish(signal: CallSignal): Promise<void> {
    const payload = `${signal.callId}:${signal.fromId}`;
    try {
      if (this.config.queueBackend === 'postgres') {
        await this.dataSource.query(`SELECT pg_notify($1, $2)`, [this.channel, payload]);
      } else {
        // Queued while the connection is being made (the first signal of a process), bounded by the command timeout.
        this.publisher ??= this.redis('publisher', { boundedCommands: true, maxRetriesPerRequest: 1 });
        await this.publisher.publish(this.channel, payload);
      }
    } catch (error) {
      this.logger.warn({ callId: signal.callId, error: (error as Error).message }, 'could not signal a call change');
    }
  }

  /**
   * Listens to one call's signals in this process, from the moment it resolves (a read after it misses nothing);
   * resolves to what stops listening.
   */
  async subscribe(callId: number, listener: Listener): Promise<() => void> {
    await this.connect();
    let set = this.listeners.get(callId);
    if (!set) this.listeners.set(callId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(callId) === set) this.listeners.delete(callId);
    };
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await Promise.all([
      this.publisher && closeRedisClient(this.publisher),
      this.subscriber && closeRedisClient(this.subscriber),
      this.listening?.end().catch(() => undefined),
    ]);
  }

  private deliver(payload: string): void {
    const [callId, fromId] = payload.split(':').map(Number);
    const set = this.listeners.get(callId);
    if (!set) return;
    for (const listener of [...set]) listener({ callId, fromId });
  }

  /** After a lost connection every listener reads again: signals sent meanwhile are gone. */
  private everyoneReads(): void {
    for (const [callId, set] of this.listeners) for (const listener of [...set]) listener({ callId, fromId: 0 });
  }

  private connect(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.config.queueBackend === 'postgres') {
      if (!this.listening) this.ready = this.listen();
      return this.ready ?? Promise.resolve();
    }
    if (this.subscriber) return this.ready ?? Promise.resolve();
    const subscriber = this.redis('subscriber', { maxRetriesPerRequest: null });
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, payload: string) => this.deliver(payload));
    let subscribedBefore = false;
    subscriber.on('ready', () => {
      // ioredis subscribes again itself after a reconnect; what was sent in between is read again.
      if (subscribedBefore) this.everyoneReads();
      subscribedBefore = true;
    });
    this.ready = subscriber.subscribe(this.channel).then(
      () => undefined,
      (error: Error) => this.logger.warn({ error: error.message }, 'could not subscribe to call signals'),
    );
    return this.ready;
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.config.databaseUrl });
    this.listening = client;
    const retry = (error: Error) => {
      if (this.listening !== client) return;
      this.logger.warn({ error: error.message }, 'call signals: connection to PostgreSQL lost, listening again');
      this.listening = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      setTimeout(() => {
        if (this.closed || this.listening) return;
        this.ready = this.listen().then(() => this.everyoneReads());
      }, RECONNECT_MS).unref();
    };
    client.on('error', retry);
    client.on('notification', (message) => {
      if (message.payload) this.deliver(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${escapeIdentifier(this.channel)}`);
    } catch (error) {
      retry(error as Error);
    }
  }

  private redis(role: string, options: Parameters<typeof createRedisClient>[1]): RedisClient {
    const client = createRedisClient(this.config, options);
    client.on('error', (error: Error) => this.logger.warn({ role, error: error.message }, 'call signals: redis error'));
    return client;
  }
}
