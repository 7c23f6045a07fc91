import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { WindowCounters } from '@app/platform';

const WINDOW_MS = 60_000;
/** Warn about an unreachable counter store at most this often, not on every request. */
const WARNING_INTERVAL_MS = 10_000;
/** Trackers known to be over their budget, kept in memory to refuse them without a round trip. */
const MAX_REMEMBERED = 10_000;

export interface RateState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  exceeded: boolean;
}

/**
 * Fixed one-minute windows, one counter per tracker (a credential, or a client address), in the shared
 * WindowCounters (Redis, or Postgres with QUEUE_BACKEND=postgres): one round trip per request.
 *
 * It fails open: while the store is unreachable nothing is counted and requests go through (authentication still
 * applies), because refusing every request would turn a Redis outage into an API outage.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private lastWarning = 0;
  private readonly exceededUntil = new Map<string, number>();

  constructor(
    private readonly config: AppConfig,
    private readonly counters: WindowCounters,
  ) {}

  /** Counts one request against the tracker. */
  async hit(tracker: string): Promise<RateState | undefined> {
    try {
      const { count, ttlMs } = await this.counters.hit(`rate:${tracker}`, WINDOW_MS);
      const state = this.state(count, ttlMs);
      // Its budget is spent: the next request of this window is refused without asking the store (or the database).
      if (state.remaining === 0) this.remember(tracker, state.resetSeconds);
      return state;
    } catch (error) {
      this.warn(error as Error);
      return undefined;
    }
  }

  /**
   * The state of a tracker whose budget was found spent in this window, from memory (no round trip), or
   * undefined. Trackers are remembered when a `hit` uses up their budget, until their window ends.
   */
  knownExceeded(tracker: string): RateState | undefined {
    const until = this.exceededUntil.get(tracker);
    if (until === undefined) return undefined;
    const left = until - Date.now();
    if (left <= 0) {
      this.exceededUntil.delete(tracker);
      return undefined;
    }
    return {
      limit: this.config.rateLimitPerMinute,
      remaining: 0,
      resetSeconds: Math.ceil(left / 1000),
      exceeded: true,
    };
  }

  private remember(tracker: string, seconds: number): void {
    // Bounded: under a flood of addresses the oldest entries go first (Map keeps insertion order).
    if (this.exceededUntil.size >= MAX_REMEMBERED) {
      this.exceededUntil.delete(this.exceededUntil.keys().next().value as string);
    }
    this.exceededUntil.set(tracker, Date.now() + seconds * 1000);
  }

  private state(count: number, ttlMs: number, exceeded = count > this.config.rateLimitPerMinute): RateState {
    const limit = this.config.rateLimitPerMinute;
    return {
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.max(1, Math.ceil((ttlMs > 0 ? ttlMs : WINDOW_MS) / 1000)),
      exceeded,
    };
  }

  private warn(error: Error): void {
    if (Date.now() - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = Date.now();
    this.logger.warn({ error: error.message }, 'rate limiting skipped: counter store unavailable');
  }
}
