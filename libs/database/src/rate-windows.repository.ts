import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A counter's value in its window, and the milliseconds until the window ends. */
export interface RateWindowCount {
  count: number;
  ttlMs: number;
}

const TTL_MS = `greatest(0, ceil(extract(epoch FROM (w.ends_at - clock_timestamp())) * 1000))::bigint`;

/**
 * The fixed-window counters of `rate_windows` (the Postgres store of libs/platform's `WindowCounters`), one row a
 * key: unlogged (not WAL-logged: cheap writes, and a crash only resets the counts, as a Redis restart would). One
 * statement a call; a hit upserts, and an ended window restarts at 1 in the same statement.
 */
@Injectable()
export class RateWindowsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Adds one to the key's count, opening a window of `windowMs` when none is open, and answers the count. */
  async hit(key: string, windowMs: number): Promise<RateWindowCount> {
    const [row] = await this.manager.query(
      `INSERT INTO rate_windows AS w (key, count, ends_at)
         VALUES ($1, 1, clock_timestamp() + $2 * interval '1 millisecond')
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN w.ends_at <= clock_timestamp() THEN 1 ELSE w.count + 1 END,
         ends_at = CASE WHEN w.ends_at <= clock_timestamp() THEN EXCLUDED.ends_at ELSE w.ends_at END
       RETURNING count, ${TTL_MS} AS ttl_ms`,
      [key, windowMs],
    );
    return { count: Number(row.count), ttlMs: Number(row.ttl_ms) };
  }

  /** The key's count in its open window (0 when none is open). */
  async peek(key: string): Promise<RateWindowCount> {
    const [row] = await this.manager.query(
      `SELECT count, ${TTL_MS} AS ttl_ms FROM rate_windows w WHERE key = $1 AND ends_at > clock_timestamp()`,
      [key],
    );
    return row ? { count: Number(row.count), ttlMs: Number(row.ttl_ms) } : { count: 0, ttlMs: 0 };
  }

  async clear(key: string): Promise<void> {
    await this.manager.query(`DELETE FROM rate_windows WHERE key = $1`, [key]);
  }

  /** Deletes the windows that ended over a minute ago; a row left over is ignored by every read anyway. */
  async purgeEnded(): Promise<void> {
    await this.manager.query(`DELETE FROM rate_windows WHERE ends_at < clock_timestamp() - interval '1 minute'`);
  }
}
