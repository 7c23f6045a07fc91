import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { JobDefinition, JobQueue, Jobs } from '@app/jobs';

/**
 * Registers the repeatable maintenance jobs. Upserting a job scheduler is idempotent, so every worker can do it
 * at boot and each job still runs once per interval across the fleet.
 */
@Injectable()
export class MaintenanceSchedule implements OnApplicationBootstrap {
  constructor(
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.schedule(Jobs.purgeExpiredSessions, this.config.sessionPurgeIntervalSeconds);
    await this.schedule(Jobs.sweepStuckDocuments, this.config.documentSweepIntervalSeconds);
  }

  private async schedule(definition: JobDefinition<Record<string, never>>, everySeconds: number): Promise<void> {
    await this.jobs
      .queue(definition.queue)
      .upsertJobScheduler(
        definition.name,
        { every: everySeconds * 1000 },
        { name: definition.name, data: {}, opts: this.jobs.optionsFor(definition, {}) },
      );
  }
}
