import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RedisClient } from '../redis/redis-clients';
import { InjectRedis } from '../redis/redis.module';
import { withTimeout } from '../with-timeout';
import { ShutdownState } from './shutdown-state';
import { errorMessage } from '../error-message';

export type CheckStatus = 'up' | 'down';
export interface CheckResult {
  status: CheckStatus;
  latency_ms?: number;
  error?: string;
  [detail: string]: unknown;
}
export interface HealthReport {
  status: 'ok' | 'error';
  checks: Record<string, CheckResult>;
}

const CHECK_TIMEOUT_MS = 2000;

/** Runs a named check with a time cap; a failure is reported, never thrown. */
export async function runCheck(work: () => Promise<Record<string, unknown> | void>): Promise<CheckResult> {
  const started = performance.now();
  try {
    const details = (await withTimeout(work(), CHECK_TIMEOUT_MS, `timed out after ${CHECK_TIMEOUT_MS} ms`)) ?? {};
    return { status: 'up', latency_ms: Math.round(performance.now() - started), ...details };
  } catch (error) {
    return { status: 'down', error: errorMessage(error) };
  }
}

/** Liveness (the process answers) and readiness (its dependencies answer), shared by both apps. */
@Injectable()
export class HealthService {
  constructor(
    private readonly dataSource: DataSource,
    @InjectRedis() private readonly redis: RedisClient | null,
    private readonly shutdown: ShutdownState,
  ) {}

  liveness(): HealthReport {
    return { status: 'ok', checks: { process: { status: 'up', uptime_seconds: Math.round(process.uptime()) } } };
  }

  async readiness(extra: Record<string, () => Promise<Record<string, unknown> | void>> = {}): Promise<HealthReport> {
    const checks: Record<string, () => Promise<Record<string, unknown> | void>> = {
      database: async () => {
        await this.dataSource.query('SELECT 1');
      },
      // Checked only while Redis carries the queues; with QUEUE_BACKEND=postgres nothing uses it.
      ...(this.redis ? { redis: async () => void (await this.redis?.ping()) } : {}),
      ...extra,
    };
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => runCheck(checks[name])));
    const report: Record<string, CheckResult> = Object.fromEntries(names.map((name, index) => [name, results[index]]));
    // Once shutdown begins the process should get no new traffic, whatever its dependencies say.
    report.shutdown = this.shutdown.isDraining ? { status: 'down', error: 'shutting down' } : { status: 'up' };
    return { status: Object.values(report).every((result) => result.status === 'up') ? 'ok' : 'error', checks: report };
  }
}
