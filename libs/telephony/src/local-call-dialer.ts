import { setTimeout as sleep } from 'node:timers/promises';
import { CallDialError, type CallDialer, type DialRequest } from './call-dialer';

/** Where the local dialer keeps the dial requests it was given (a table, so every process and test sees them). */
export interface DialRequestLog {
  has(attemptId: string): Promise<boolean>;
  add(request: DialRequest): Promise<void>;
}

export interface LocalCallDialerOptions {
  log: DialRequestLog;
  /** How long a dial takes, as a provider's would. */
  latencyMs?: number;
  /** Demo mode: called once per placed call, to play it out as the voice runtime would. */
  playOut?: (request: DialRequest) => void;
}

/**
 * A dialer for development and tests: calls nobody, records each dial request, and (in demo mode) has each call
 * played out. Like a provider it is idempotent on the attempt: a resumed attempt already recorded is not placed
 * again. `failNext` makes the next dials fail, as a provider that refuses or is down would.
 */
export class LocalCallDialer implements CallDialer {
  private failures: string[] = [];

  constructor(private readonly options: LocalCallDialerOptions) {}

  failNext(reason = 'Simulated provider failure: the trunk rejected the call.', times = 1): void {
    this.failures.push(...Array.from({ length: times }, () => reason));
  }

  async dial(request: DialRequest): Promise<void> {
    if (this.options.latencyMs) await sleep(this.options.latencyMs);
    const failure = this.failures.shift();
    if (failure !== undefined) throw new CallDialError(failure);
    if (request.resumed && (await this.options.log.has(request.attemptId))) return;
    await this.options.log.add(request);
    this.options.playOut?.(request);
  }
}
