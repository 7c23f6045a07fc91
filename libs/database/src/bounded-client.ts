import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';

/** pg's error for a statement not answered within `query_timeout`. */
const STATEMENT_TIMEOUT_MESSAGE = 'Query read timeout';

const longerBounds = new AsyncLocalStorage<number>();

/**
 * Runs work whose statements may take up to `timeoutMs` each instead of the pool's bound: the rare request whose
 * statement grows with an account's data without limit. It changes nothing on a pool without a bound.
 */
export function withStatementBound<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
  return longerBounds.run(timeoutMs, work);
}

/**
 * The pool's connection when statements are bounded (`query_timeout`). pg fails a statement the server has not
 * answered in time but keeps its connection, still waiting for that answer: every later statement on it waits behind
 * the first and times out in turn, and TypeORM hands it back to the pool as healthy (it releases a connection without
 * the statement's error). A connection whose statement timed out is closed instead, so the pool opens a fresh one and
 * the next request meets the server as it is now, not a connection stuck on the past.
 */
export class BoundedClient extends Client {
  // pg's `query` has many overloads (callback, promise, submittable); this passes each through unchanged.
  override query(...args: unknown[]): any {
    const longer = longerBounds.getStore();
    if (longer !== undefined && typeof args[0] === 'string') args[0] = { text: args[0], query_timeout: longer };
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: Error | null, ...rest: unknown[]) => {
        this.closeAfterTimeout(error);
        return callback(error, ...rest);
      };
    }
    const result = (Client.prototype.query as (...values: unknown[]) => unknown).apply(this, args);
    if (typeof callback !== 'function' && result instanceof Promise) {
      result.catch((error: Error) => this.closeAfterTimeout(error));
    }
    return result;
  }

  private closeAfterTimeout(error: Error | null): void {
    // With the statement still in flight, pg's `end` destroys the socket at once rather than waiting for its answer;
    // the pool then drops the connection (`_ending`) when it is released.
    if (error?.message === STATEMENT_TIMEOUT_MESSAGE) void this.end().catch(() => undefined);
  }
}
