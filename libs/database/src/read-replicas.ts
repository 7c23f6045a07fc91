import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions, type PoolBounds } from './data-source-options';
import { queryPool } from './pool-query';

/**
 * Where a request's account reads may go. Set around each API request; outside one (the worker, the CLI,
 * jobs) there is none and every read goes to the primary.
 */
export interface RequestReads {
  replicaReads: boolean;
  /** The server each account's reads of this request use, so a page and its total come from the same one. */
  chosen: Map<number, Promise<Replica | undefined>>;
  /** Accounts whose data this request wrote on another account's behalf (the voice runtime's call writes). */
  written: Set<number>;
}

const scopes = new AsyncLocalStorage<RequestReads>();

/**
 * Marks an account as written by the current request, so its next reads see the write (see `ReadReplicas`). For
 * writes a request makes for an account other than the caller's; outside a request it does nothing.
 */
export function noteAccountWrite(ownerId: number): void {
  scopes.getStore()?.written.add(ownerId);
}

/** A pg_lsn ('16/B374D848') as a number that compares. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Why a read on a replica failed: the replica itself (fall back to the primary) or the statement (do not). */
function replicaAtFault(error: unknown): boolean {
  const code = (error as { driverError?: { code?: unknown } }).driverError?.code ?? (error as { code?: unknown }).code;
  // No SQLSTATE: the connection failed (refused, reset, timed out). 08: connection exceptions; 57: the server is
  // shutting down or not accepting connections; 53: out of resources; 40001 on a standby: replay cancelled the query.
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return /^(08|57|53)/.test(code) || code === '40001';
}

const POLL_INTERVAL_MS = 1000;
const POLL_TIMEOUT_MS = 2000;
const REPLICA_POOL_SIZE = 10;

const RECORD_WRITE_SQL = `INSERT INTO account_write_positions AS position (user_id, lsn)
  VALUES ($1, pg_current_wal_insert_lsn())
  ON CONFLICT (user_id) DO UPDATE SET lsn = GREATEST(position.lsn, excluded.lsn)`;
const WRITE_POSITION_SQL = `SELECT lsn::text AS lsn FROM account_write_positions WHERE user_id = $1`;

function withTimeout<T>(promise: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${milliseconds} ms`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Where a replica is, for reports: never its credentials. */
function describe(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

/** One replica: its own TypeORM data source (the same entities), connected and watched in the background. */
class Replica {
  dataSource?: DataSource;
  /** WAL position the replica had replayed at its last check; reads need it at or past their account's writes. */
  replayed = -1n;
  error?: string = 'not checked yet';
  lagMs = 0;

  constructor(
    readonly url: string,
    readonly name: string,
    private readonly bounds?: PoolBounds,
  ) {}

  get up(): boolean {
    return this.dataSource !== undefined && this.error === undefined;
  }

  markDown(error: unknown): void {
    this.error = error instanceof Error ? error.message : String(error);
  }

  async connect(): Promise<DataSource> {
    if (this.dataSource) return this.dataSource;
    // A connection must not hang on a standby that is gone: the primary serves meanwhile.
    const options = dataSourceOptions(this.url, REPLICA_POOL_SIZE, { ...this.bounds, connectMs: POLL_TIMEOUT_MS });
    const dataSource = new DataSource({
      ...options,
      migrations: [],
      // A standby is read-only: nothing to install.
      installExtensions: false,
    } as typeof options);
    await dataSource.initialize();
    this.dataSource = dataSource;
    return dataSource;
  }

  async close(): Promise<void> {
    const dataSource = this.dataSource;
    this.dataSource = undefined;
    if (dataSource?.isInitialized) await dataSource.destroy();
  }
}

/** A replica's state, as readiness reports it. */
export interface ReplicaReport {
  replica: string;
  status: 'up' | 'lagging' | 'down';
  lag_seconds?: number;
  /** The WAL position it had replayed at its last check. */
  replayed_lsn?: string;
  error?: string;
}

/**
 * Routes the API's account reads to streaming replicas (DATABASE_REPLICA_URLS) without ever showing an account
 * data older than its own last write.
 *
 * TypeORM's own `replication` option does not fit: it connects every replica at boot (one down replica stops the
 * process), sends each SELECT to a replica picked at random, with no notion of a replica being down or behind,
 * and cannot keep an account on the primary after its write. So each replica is a TypeORM data source of its own
 * (the same entities, repositories and query builder) and this class chooses between them and the primary:
 *
 * - Only reads of a request that writes nothing (GET) go to replicas; writes, reads inside a write, and everything
 *   the worker does use the primary.
 * - After an account writes, the primary's WAL insert position is kept for it (one unlogged row). Its reads go to a
 *   replica only once that replica has replayed past that position, else to the primary; other accounts are not
 *   affected. The position is kept in the primary, so every API process sees it at once.
 * - Each replica is checked every second: one that does not answer, or whose data is older than
 *   DATABASE_REPLICA_MAX_LAG_SECONDS, is skipped until it is back; a read that fails on a replica for the
 *   replica's sake is run again on the primary at once.
 */
export class ReadReplicas implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplicas.name);
  private readonly replicas: Replica[];
  /** The primary's WAL position over the last moments, to tell how far behind a replica's data is. */
  private samples: { at: number; lsn: bigint }[] = [];
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private turn = 0;

  constructor(
    private readonly primary: DataSource,
    replicaUrls: string[],
    private readonly maxLagMs: number,
    bounds?: PoolBounds,
  ) {
    this.replicas = replicaUrls.map((url) => new Replica(url, describe(url), bounds));
  }

  get configured(): boolean {
    return this.replicas.length > 0;
  }

  onApplicationBootstrap(): void {
    if (!this.configured) return;
    // In the background: a replica that is down at boot is skipped, never waited for.
    const poll = () => {
      this.polling ??= this.poll().finally(() => (this.polling = undefined));
    };
    poll();
    this.timer = setInterval(poll, POLL_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.polling?.catch(() => undefined);
    await Promise.all(this.replicas.map((replica) => replica.close()));
  }

  /** Runs a request's handler with its account reads allowed on replicas (when `replicaReads`). */
  runRequest<T>(replicaReads: boolean, work: (reads: RequestReads) => T): T {
    const reads: RequestReads = { replicaReads, chosen: new Map(), written: new Set() };
    return scopes.run(reads, () => work(reads));
  }

  /**
   * Keeps the primary's WAL position after an account's write, so its next reads wait for a replica that has it.
   * Called once the write has committed and before the answer leaves.
   */
  async recordWrite(ownerId: number): Promise<void> {
    if (!this.configured) return;
    await queryPool(this.primary, RECORD_WRITE_SQL, [ownerId]);
  }

  /** Runs an account's read on a replica fresh enough for it, or on the primary. */
  read<T>(ownerId: number, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
    // Without replicas, or in a request that writes, straight to the primary: no choice to wait for.
    if (!this.configured || !scopes.getStore()?.replicaReads) return work(this.primary);
    return this.readChosen(ownerId, work);
  }

  private async readChosen<T>(ownerId: number, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
    const replica = await this.replicaFor(ownerId);
    if (!replica?.dataSource) return work(this.primary);
    try {
      return await work(replica.dataSource);
    } catch (error) {
      if (!replicaAtFault(error)) throw error;
      replica.markDown(error);
      this.logger.warn(
        { replica: replica.name, error: replica.error },
        'read replica failed; reading from the primary',
      );
      return work(this.primary);
    }
  }

  /**
   * An account's read as one SQL statement (see `read`), run straight on the chosen server's pool, as the account
   * repository's lean path runs its statements (see `queryPool`).
   */
  // Rows as loosely typed as DataSource.query's, which this stands in for.
  query<Row = any>(ownerId: number, sql: string, parameters: unknown[] = []): Promise<Row[]> {
    return this.read(ownerId, (dataSource) => queryPool<Row>(dataSource, sql, parameters));
  }

  /** Each replica's state, for readiness: a replica down or behind is reported, and never fails readiness. */
  report(): ReplicaReport[] {
    return this.replicas.map((replica) => ({
      replica: replica.name,
      status: !replica.up ? 'down' : this.lagging(replica) ? 'lagging' : 'up',
      ...(replica.up
        ? { lag_seconds: Math.round(replica.lagMs / 100) / 10, replayed_lsn: formatLsn(replica.replayed) }
        : { error: replica.error }),
    }));
  }

  /**
   * The readiness entry of the replicas (none without any): always up, since the primary serves every read a
   * replica cannot, with each replica's state in `replicas`.
   */
  readinessChecks(): Record<string, () => Promise<Record<string, unknown>>> {
    if (!this.configured) return {};
    return {
      database_replicas: async () => {
        const replicas = this.report();
        return { in_use: replicas.filter((replica) => replica.status === 'up').length, replicas };
      },
    };
  }

  /** The server this request reads this account's data from: undefined for the primary. */
  private replicaFor(ownerId: number): Promise<Replica | undefined> {
    const scope = scopes.getStore();
    if (!scope?.replicaReads || !this.configured) return Promise.resolve(undefined);
    let chosen = scope.chosen.get(ownerId);
    if (!chosen) {
      chosen = this.choose(ownerId);
      scope.chosen.set(ownerId, chosen);
    }
    // A replica that failed earlier in this request is not tried again.
    return chosen.then((replica) => (replica?.up ? replica : undefined));
  }

  private async choose(ownerId: number): Promise<Replica | undefined> {
    const usable = this.replicas.filter((replica) => replica.up && !this.lagging(replica));
    if (usable.length === 0) return undefined;
    const [row] = await queryPool<{ lsn: string }>(this.primary, WRITE_POSITION_SQL, [ownerId]);
    const written = row ? parseLsn(row.lsn) : -1n;
    const fresh = usable.filter((replica) => replica.replayed >= written);
    if (fresh.length === 0) return undefined;
    return fresh[this.turn++ % fresh.length];
  }

  private lagging(replica: Replica): boolean {
    return replica.lagMs > this.maxLagMs;
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    try {
      const [{ lsn }] = await withTimeout(
        queryPool<{ lsn: string }>(this.primary, 'SELECT pg_current_wal_lsn()::text AS lsn', []),
        POLL_TIMEOUT_MS,
      );
      this.samples.push({ at: now, lsn: parseLsn(lsn) });
    } catch {
      // The primary's own readiness check reports it; the replicas' lag is judged on the samples already taken.
    }
    // Long enough to tell that a replica is further behind than the bound.
    this.samples = this.samples.filter((sample) => sample.at >= now - this.maxLagMs - 5 * POLL_INTERVAL_MS);
    await Promise.all(this.replicas.map((replica) => this.check(replica, now)));
  }

  private async check(replica: Replica, now: number): Promise<void> {
    const wasUp = replica.up;
    try {
      const dataSource = await withTimeout(replica.connect(), POLL_TIMEOUT_MS * 2);
      const [state] = await withTimeout(
        queryPool<{ standby: boolean; replayed: string | null }>(
          dataSource,
          'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed',
          [],
        ),
        POLL_TIMEOUT_MS,
      );
      if (!state.standby || !state.replayed) throw new Error('not a streaming replica (not in recovery)');
      replica.replayed = parseLsn(state.replayed);
      // How old the oldest write it is missing is: none missing when it has the primary's last position.
      const missing = this.samples.find((sample) => sample.lsn > replica.replayed);
      replica.lagMs = missing ? now - missing.at : 0;
      replica.error = undefined;
    } catch (error) {
      replica.markDown(error);
    }
    if (wasUp !== replica.up) {
      if (replica.up) this.logger.log({ replica: replica.name }, 'read replica in use');
      else this.logger.warn({ replica: replica.name, error: replica.error }, 'read replica skipped');
    }
  }
}
