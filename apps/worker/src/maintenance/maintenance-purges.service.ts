import { Injectable, Logger } from '@nestjs/common';
import { IDEMPOTENCY_TTL_HOURS } from '@app/contracts';
import { EXPIRING_TOKEN_TABLES, ExpiringTokensRepository, IdempotencyKeysRepository } from '@app/database';
import { HandlesJob, Jobs } from '@app/jobs';

/** The purges of records no feature of the worker owns: tokens past their expiry, Idempotency-Key records. */
@Injectable()
export class MaintenancePurges {
  private readonly logger = new Logger(MaintenancePurges.name);

  constructor(
    private readonly expiringTokens: ExpiringTokensRepository,
    private readonly idempotencyKeys: IdempotencyKeysRepository,
  ) {}

  /**
   * Expired session tokens and call tokens are already refused when presented; this keeps their tables from growing
   * without bound.
   */
  @HandlesJob(Jobs.purgeExpiredSessions)
  async purgeExpiredSessions(): Promise<{ deleted: number }> {
    let deleted = 0;
    for (const table of EXPIRING_TOKEN_TABLES) {
      const count = await this.expiringTokens.purgeExpired(table);
      if (count > 0) this.logger.log({ deleted: count, table }, 'purged expired tokens');
      deleted += count;
    }
    return { deleted };
  }

  /** Keys answer replays for IDEMPOTENCY_TTL_HOURS (see the API's IdempotencyStore); older ones are dead weight. */
  @HandlesJob(Jobs.purgeIdempotencyKeys)
  async purgeIdempotencyKeys(): Promise<{ deleted: number }> {
    const deleted = await this.idempotencyKeys.purgeOlderThan(IDEMPOTENCY_TTL_HOURS);
    if (deleted > 0) this.logger.log({ deleted }, 'purged expired idempotency keys');
    return { deleted };
  }
}
