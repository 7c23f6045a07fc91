import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { allJobs, type JobDefinition, JobQueue } from '@app/jobs';
import { errorMessage } from '@app/platform';

export interface RepeatableJob {
  definition: JobDefinition<unknown>;
  everySeconds: number;
}

/** Every job that repeats on its own under this configuration, with its interval (see `JobDefinition.every`). */
export function repeatableJobs(config: AppConfig): RepeatableJob[] {
  return allJobs().flatMap((definition) => {
    const everySeconds = definition.every?.(config);
    return everySeconds === undefined ? [] : [{ definition, everySeconds }];
  });
}

/** The schedules the queue backend does not know (Redis lost its data); readiness reports them. */
export async function missingSchedules(jobs: JobQueue, config: AppConfig): Promise<string[]> {
  const found = await Promise.all(
    repeatableJobs(config).map(async ({ definition }) =>
      (await jobs.queue(definition.queue).getJobScheduler(definition.name)) ? undefined : definition.name,
    ),
  );
  return found.filter((name): name is string => name !== undefined);
}

/**
 * The schedules to write: those the queue backend does not know, those registered with another interval than this
 * worker's configuration (a changed setting takes effect without clearing Redis by hand), and those whose next run is
 * long overdue. A schedule's next run is a job that each run adds; should that job be lost (a Redis master that died
 * before its replica had it), the schedule would stay registered and never run again.
 */
async function schedulesToWrite(
  jobs: JobQueue,
  config: AppConfig,
): Promise<(RepeatableJob & { registered: boolean })[]> {
  const now = Date.now();
  const stale = await Promise.all(
    repeatableJobs(config).map(async (job) => {
      const every = job.everySeconds * 1000;
      const scheduler = await jobs.queue(job.definition.queue).getJobScheduler(job.definition.name);
      const overdue = scheduler?.next !== undefined && Number(scheduler.next) < now - Math.max(3 * every, 60_000);
      if (scheduler && Number(scheduler.every) === every && !overdue) return undefined;
      return { ...job, registered: Boolean(scheduler) };
    }),
  );
  return stale.filter((job) => job !== undefined);
}

/** How often a worker checks that the schedules still exist in the queue backend. */
const CHECK_INTERVAL_MS = 15_000;

/**
 * Keeps the repeatable jobs registered. Schedules live in the queue backend, so a Redis that loses its data (a
 * restart without persistence, a failover to an empty replica) would silently stop the sweeper and the purge until some
 * worker restarted. Each worker therefore registers them at boot, again whenever its queue connection becomes
 * ready after a reconnect, and puts back any that a periodic check finds missing. Upserting an existing
 * schedule could move its next run, so only missing ones, and ones whose interval differs from this worker's
 * configuration, are written (workers of one deployment should share the intervals, or they take turns).
 */
@Injectable()
export class MaintenanceSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MaintenanceSchedule.name);
  private timer?: NodeJS.Timeout;
  private ensuring?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.ensure();
    const queues = new Set(repeatableJobs(this.config).map(({ definition }) => this.jobs.queue(definition.queue)));
    for (const queue of queues) {
      queue.getBackend().on('ready', () => void this.ensureQuietly());
    }
    this.timer = setInterval(() => void this.ensureQuietly(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Registers every schedule the queue backend lacks or holds with another interval. Concurrent callers share one pass. */
  ensure(): Promise<void> {
    this.ensuring ??= this.writeSchedules().finally(() => (this.ensuring = undefined));
    return this.ensuring;
  }

  private async ensureQuietly(): Promise<void> {
    try {
      await this.ensure();
    } catch (error) {
      this.logger.warn({ error: errorMessage(error) }, 'could not check the job schedules; will retry');
    }
  }

  private async writeSchedules(): Promise<void> {
    const written: string[] = [];
    for (const { definition, everySeconds, registered } of await schedulesToWrite(this.jobs, this.config)) {
      const queue = this.jobs.queue(definition.queue);
      // A changed schedule is removed and written anew, so its next run counts from now rather than from the
      // offset and pending run it was first written with.
      if (registered) await queue.removeJobScheduler(definition.name);
      await queue.upsertJobScheduler(
        definition.name,
        { every: everySeconds * 1000 },
        { name: definition.name, data: {}, opts: this.jobs.optionsFor(definition, {}) },
      );
      this.logger.debug({ job: definition.name, everySeconds }, 'registered job schedule');
      written.push(definition.name);
    }
    if (written.length > 0) this.logger.log({ jobs: written }, `registered ${written.length} job schedules`);
  }
}
