import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import { AppConfig } from '@app/config';
import { JobProcessor, QueueBackend, allJobs, handlerProblems } from '@app/jobs';
import { JobMetrics } from './job-metrics';

export const JOB_PROCESSORS = Symbol('JOB_PROCESSORS');

/**
 * Runs one BullMQ Worker per processor with the configured concurrency and lock timings. Refuses to boot when a
 * declared job has no handler, or two, or one on another queue's processor; on shutdown waits for the jobs in hand (a job cut off by a crash is taken over
 * by another worker once its lock expires).
 */
@Injectable()
export class WorkerRunner implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerRunner.name);
  private readonly workers: Worker[] = [];

  constructor(
    private readonly config: AppConfig,
    @Inject(JOB_PROCESSORS) private readonly processors: JobProcessor[],
    private readonly metrics: JobMetrics,
    private readonly backend: QueueBackend,
  ) {}

  onModuleInit(): void {
    const problems = handlerProblems(this.processors, allJobs());
    if (problems.length > 0) throw new Error(`The worker cannot run the declared jobs: ${problems.join('; ')}`);
  }

  /** Resolves once every worker's connections are up, so a shutdown never races their setup. */
  async onApplicationBootstrap(): Promise<void> {
    for (const processor of this.processors) {
      // The backend attaches the worker's error listener.
      const worker = this.backend.createWorker(processor.queueName, (job) => processor.process(job), {
        concurrency: this.config.workerConcurrency,
        lockDuration: this.config.jobLockMs,
        stalledInterval: this.config.jobStalledCheckMs,
      });
      const queue = processor.queueName;
      worker.on('active', (job) => {
        this.metrics.started(queue, job);
        const requestId = (job.data as { enqueuedBy?: { requestId?: string } } | undefined)?.enqueuedBy?.requestId;
        const line = { queue, job: job.name, jobId: job.id, attempt: job.attemptsMade + 1, requestId };
        if (scheduled(job)) this.logger.debug(line, 'job started');
        else this.logger.log(line, 'job started');
      });
      // A failure a handler recorded itself ends the job failed (JobProcessor.process), so it arrives below.
      worker.on('completed', (job) => this.finished(queue, job, 'completed'));
      worker.on('failed', (job, error) => {
        if (!job) return;
        const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
        this.finished(queue, job, final ? 'failed' : 'retrying', error.message);
      });
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
  }

  private finished(queue: string, job: Job, outcome: 'completed' | 'failed' | 'retrying', error?: string): void {
    const durationMs = this.metrics.finishedAttempt(queue, job, outcome);
    const requestId = (job.data as { enqueuedBy?: { requestId?: string } } | undefined)?.enqueuedBy?.requestId;
    const line = {
      queue,
      job: job.name,
      jobId: job.id,
      attempt: job.attemptsMade,
      outcome,
      durationMs,
      error,
      requestId,
    };
    // A schedule's routine runs (sweeps, purges, a dial tick) would otherwise be most of the log, saying nothing.
    if (outcome === 'completed' && scheduled(job)) this.logger.debug(line, 'job finished');
    else if (outcome === 'completed') this.logger.log(line, 'job finished');
    else this.logger.warn(line, 'job finished');
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}

/** Whether a job was started by a schedule (BullMQ's job schedulers name their jobs `repeat:...`). */
function scheduled(job: Job): boolean {
  return job.id?.startsWith('repeat:') ?? false;
}
