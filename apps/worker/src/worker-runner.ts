import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { Worker } from 'bullmq';
import { AppConfig, redisOptionsFromUrl } from '@app/config';
import { JobProcessor, allJobs } from '@app/jobs';
import { jobDuration, jobsFinished } from '@app/platform';

export const JOB_PROCESSORS = Symbol('JOB_PROCESSORS');

/**
 * Runs one BullMQ Worker per processor with the configured concurrency and lock timings. Refuses to boot when a
 * declared job has no handler; on shutdown waits for the jobs in hand (a job cut off by a crash is taken over
 * by another worker once its lock expires).
 */
@Injectable()
export class WorkerRunner implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerRunner.name);
  private readonly workers: Worker[] = [];

  constructor(
    private readonly config: AppConfig,
    @Inject(JOB_PROCESSORS) private readonly processors: JobProcessor[],
  ) {}

  onModuleInit(): void {
    const missing = allJobs().filter(
      (definition) => !this.processors.some((processor) => processor.handles(definition)),
    );
    if (missing.length > 0) {
      const names = missing.map((definition) => `${definition.queue}/${definition.name}`).join(', ');
      throw new Error(`No processor handles these declared jobs: ${names}`);
    }
  }

  /** Resolves once every worker's Redis connections are up, so a shutdown never races their setup. */
  async onApplicationBootstrap(): Promise<void> {
    for (const processor of this.processors) {
      const worker = new Worker(processor.queueName, (job) => processor.process(job), {
        connection: { ...redisOptionsFromUrl(this.config.redisUrl), maxRetriesPerRequest: null },
        prefix: this.config.queuePrefix,
        concurrency: this.config.workerConcurrency,
        lockDuration: this.config.jobLockMs,
        stalledInterval: this.config.jobStalledCheckMs,
      });
      worker.on('completed', (job) => this.record(processor.queueName, job.name, 'completed', job));
      worker.on('failed', (job, error) => {
        if (job) this.record(processor.queueName, job.name, 'failed', job);
        this.logger.warn(
          {
            queue: processor.queueName,
            job: job?.name,
            jobId: job?.id,
            attempt: job?.attemptsMade,
            error: error.message,
          },
          'job failed',
        );
      });
      worker.on('error', (error) =>
        this.logger.error({ queue: processor.queueName, error: error.message }, 'worker error'),
      );
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
  }

  private record(
    queue: string,
    job: string,
    outcome: 'completed' | 'failed',
    timing: { processedOn?: number; finishedOn?: number },
  ) {
    jobsFinished.inc({ queue, job, outcome });
    if (timing.processedOn && timing.finishedOn) {
      jobDuration.observe({ queue, job }, (timing.finishedOn - timing.processedOn) / 1000);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
