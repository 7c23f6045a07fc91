import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { JobQueue, Jobs } from '@app/jobs';

/**
 * Registers the repeatable maintenance jobs. Upserting a job scheduler is idempotent, so every worker can do it
 * at boot and the schedule still runs once per interval across the fleet.
 */
@Injectable()
export class MaintenanceSchedule implements OnApplicationBootstrap {
  constructor(
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const definition = Jobs.purgeExpiredSessions;
    await this.jobs
      .queue(definition.queue)
      .upsertJobScheduler(
        definition.name,
        { every: this.config.sessionPurgeIntervalSeconds * 1000 },
        { name: definition.name, data: {}, opts: definition.options },
      );
  }
}
