import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { IDEMPOTENCY_TTL_HOURS } from '@app/contracts';
import {
  CallsRepository,
  EXPIRING_TOKEN_TABLES,
  ExpiringTokensRepository,
  IdempotencyKeysRepository,
} from '@app/database';
import { handle, JobProcessor, Jobs, Queues } from '@app/jobs';
import { DocumentSweeper } from '../documents/document-sweeper.service';
import { DocumentRefresh } from '../documents/document-refresh.service';
import { PassageRecut } from '../documents/passage-recut.service';
import { CallWebhooks } from '../calls/call-webhooks.service';
import { LeadImport } from '../leads/lead-import.service';
import { CALL_PURGE_BATCH, CALL_PURGE_REST } from './call-purge-pacing';

@Injectable()
export class MaintenanceProcessor extends JobProcessor {
  readonly queueName = Queues.maintenance;
  private readonly logger = new Logger(MaintenanceProcessor.name);

  protected readonly handlers = [
    handle(Jobs.purgeExpiredSessions, () => this.purgeExpiredSessions()),
    handle(Jobs.sweepStuckDocuments, () => this.documentSweeper.sweep()),
    handle(Jobs.enqueueDueRefreshes, () => this.documentRefresh.enqueueDue()),
    handle(Jobs.recutPassages, () => this.passageRecut.recut()),
    handle(Jobs.purgeIdempotencyKeys, () => this.purgeIdempotencyKeys()),
    handle(Jobs.sweepStuckImports, () => this.leadImports.sweep()),
    handle(Jobs.reapStaleCalls, () => this.callWebhooks.reapStale()),
    handle(Jobs.sweepUndeliveredWebhooks, () => this.callWebhooks.sweepUndelivered()),
    handle(Jobs.purgeOldCalls, () => this.purgeOldCalls()),
  ];

  constructor(
    private readonly expiringTokens: ExpiringTokensRepository,
    private readonly documentSweeper: DocumentSweeper,
    private readonly documentRefresh: DocumentRefresh,
    private readonly passageRecut: PassageRecut,
    private readonly leadImports: LeadImport,
    private readonly callWebhooks: CallWebhooks,
    private readonly calls: CallsRepository,
    private readonly idempotencyKeys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
  ) {
    super();
  }

  /**
   * Expired session tokens and call tokens are already refused when presented; this keeps their tables from growing
   * without bound.
   */
  private async purgeExpiredSessions(): Promise<{ deleted: number }> {
    let deleted = 0;
    for (const table of EXPIRING_TOKEN_TABLES) {
      const count = await this.expiringTokens.purgeExpired(table);
      if (count > 0) this.logger.log({ deleted: count, table }, 'purged expired tokens');
      deleted += count;
    }
    return { deleted };
  }

  /** Keys answer replays for IDEMPOTENCY_TTL_HOURS (see the API's IdempotencyStore); older ones are dead weight. */
  private async purgeIdempotencyKeys(): Promise<{ deleted: number }> {
    const deleted = await this.idempotencyKeys.purgeOlderThan(IDEMPOTENCY_TTL_HOURS);
    if (deleted > 0) this.logger.log({ deleted }, 'purged expired idempotency keys');
    return { deleted };
  }

  /**
   * Calls older than CALL_RETENTION_DAYS go, oldest first, CALL_PURGE_BATCH a statement (`purge_calls_before`): each
   * batch is its own short transaction that counts what it removed in the purge's own counter shard, and rows another
   * transaction holds are skipped for the next run, so ingestion and lists never wait on the purge and the lists'
   * exact totals stay exact. Each batch is followed by a rest CALL_PURGE_REST times as long as it took. A run stops
   * after a minute; the next one, five minutes later, goes on.
   */
  private async purgeOldCalls(): Promise<{ deleted: number }> {
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
