import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { CallsRepository } from '@app/database';
import { HandlesJob, Jobs } from '@app/jobs';
import { CALL_PURGE_BATCH, CALL_PURGE_REST } from './call-purge-pacing';

/** CALL_RETENTION_DAYS: calls older than that are removed. */
@Injectable()
export class CallRetention {
  private readonly logger = new Logger(CallRetention.name);

  constructor(
    private readonly calls: CallsRepository,
    private readonly config: AppConfig,
  ) {}

  /**
   * Calls older than CALL_RETENTION_DAYS go, oldest first, CALL_PURGE_BATCH a statement (`purge_calls_before`): each
   * batch is its own short transaction that counts what it removed in the purge's own counter shard, and rows another
   * transaction holds are skipped for the next run, so ingestion and lists never wait on the purge and the lists'
   * exact totals stay exact. Each batch is followed by a rest CALL_PURGE_REST times as long as it took. A run stops
   * after a minute; the next one, five minutes later, goes on.
   */
  @HandlesJob(Jobs.purgeOldCalls)
  async purgeOldCalls(): Promise<{ deleted: number }> {
    const days = this.config.callRetentionDays;
    if (!days) return { deleted: 0 };
    const until = Date.now() + 60_000;
    let deleted = 0;
    for (;;) {
      const started = Date.now();
      const removed = await this.calls.purgeOlderThan(days, CALL_PURGE_BATCH);
      deleted += removed;
      if (removed < CALL_PURGE_BATCH || Date.now() > until) break;
      // At rest for a multiple of the batch's time: flat out, the purge took enough of a small machine's cores to
      // raise ingestion's p99 by half (see call-purge-pacing.ts).
      await new Promise((resolve) => setTimeout(resolve, (Date.now() - started) * CALL_PURGE_REST));
    }
    if (deleted > 0) this.logger.log({ deleted, retentionDays: days }, 'removed calls past their retention');
    return { deleted };
  }
}
