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
 * While the store is unreachable, each process counts on its own (the same windows, in memory, bounded), so a
 * budget still holds per API process: with N processes a tracker gets at most N budgets during an outage, never an
 * open door, and never a refusal of every request, which would turn a Redis outage into an API outage. Once the
 * store answers again, counting goes back to it.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private lastWarning = 0;
  private readonly exceededUntil = new Map<string, number>();
  /** This process's own windows, used only while the shared store does not answer. */
  private readonly localWindows = new Map<string, { resetAt: number; count: number }>();

  constructor(
    private readonly config: AppConfig,
    private readonly counters: WindowCounters,
  ) {}

  /** Counts one request against the tracker. */
  async hit(tracker: string): Promise<RateState> {
    let state: RateState;
    try {
      const { count, ttlMs } = await this.counters.hit(`rate:${tracker}`, WINDOW_MS);
      state = this.state(count, ttlMs);
      this.localWindows.clear();
    } catch (error) {
      this.warn(error as Error);
      // A tracker this process saw spend its budget stays refused until its window ends, outage or not.
      state = this.knownExceeded(tracker) ?? this.localHit(tracker);
    }
    // Its budget is spent: the next request of this window is refused without asking the store (or the database).
    if (state.remaining === 0) this.remember(tracker, state.resetSeconds);
    return state;
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

  /** One request in this process's own window of the tracker. */
  private localHit(tracker: string): RateState {
    const now = Date.now();
    let window = this.localWindows.get(tracker);
    if (!window || window.resetAt <= now) {
      if (!window) evictOldest(this.localWindows);
      window = { resetAt: now + WINDOW_MS, count: 0 };
      this.localWindows.set(tracker, window);
    }
    window.count++;
    return this.state(window.count, window.resetAt - now);
  }

  private remember(tracker: string, seconds: number): void {
    evictOldest(this.exceededUntil);
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
    this.logger.warn({ error: error.message }, 'counter store unavailable: rate limits counted per process');
  }
}

/** Bounded memory: under a flood of trackers the oldest entries go first (a Map keeps insertion order). */
function evictOldest(map: Map<string, unknown>): void {
  if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value as string);
}
