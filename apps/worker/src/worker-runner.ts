import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import { AppConfig } from '@app/config';
import {
  type JobHandler,
  JobQueue,
  QueueBackend,
  type QueueName,
  Queues,
  allJobs,
  discoverJobHandlers,
} from '@app/jobs';
import { JobMetrics } from './job-metrics';

/** How often each idle worker is compared with its queue's waiting jobs. */
const WATCH_INTERVAL_MS = 10_000;
/**
 * A worker that has taken no job for this long while its queue held waiting ones all along is stuck. BullMQ's
 * fetch can hang on a connection a Redis failover left behind, with no error and no way back (the Redis Cluster
 * failover test caught a dialer queue with 6 waiting jobs and both workers idle for two minutes; upstream reports:
 * taskforcesh/bullmq#648, #3088, #3185). Its maintainers' advice is to close such a worker and start another.
 */
const STUCK_AFTER_MS = 30_000;
/** The longest a stuck worker's close is waited for; its connections may never answer. */
const STUCK_CLOSE_MS = 5_000;

/** One queue's BullMQ worker in this process, and what it is doing. */
interface Running {
  queue: QueueName;
  /** The queue's job handlers, by job name. */
  handlers: ReadonlyMap<string, JobHandler>;
  worker: Worker;
  /** Jobs its handlers are running (counted around the handler, not from BullMQ's events, which a failover can lose). */
  inFlight: number;
  /** When it last started or finished a job (or was started). */
  lastActivity: number;
  /** Since when every check found waiting jobs and this worker idle. */
  idleWithWaitingSince?: number;
}

/**
 * Runs one BullMQ Worker per queue, for the `@HandlesJob` methods found on the worker's providers, with the configured
 * concurrency and lock timings. Refuses to boot when a declared job has no handler, or two, or one on a provider that
 * is not a singleton; on shutdown waits for the jobs in hand (a job cut off by a crash is taken over by another worker
 * once its lock expires). A worker found idle beside waiting jobs for STUCK_AFTER_MS is replaced.
 */
@Injectable()
export class WorkerRunner implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerRunner.name);
  private readonly running: Running[] = [];
  private readonly handlers = new Map<QueueName, Map<string, JobHandler>>();
  private watchdog?: NodeJS.Timeout;
  private watching?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly metrics: JobMetrics,
    private readonly backend: QueueBackend,
    private readonly jobs: JobQueue,
  ) {}

  onModuleInit(): void {
    const { handlers, problems } = discoverJobHandlers(this.discovery, this.scanner, allJobs());
    if (problems.length > 0) throw new Error(`The worker cannot run the declared jobs: ${problems.join('; ')}`);
    // In the order queues are declared, so workers start in the same order on every boot.
    for (const queue of Object.values(Queues)) {
      const onQueue = handlers.filter((handler) => handler.definition.queue === queue);
      if (onQueue.length === 0) continue;
      this.handlers.set(queue, new Map(onQueue.map((handler) => [handler.definition.name, handler])));
    }
  }

  /** Resolves once every worker's connections are up, so a shutdown never races their setup. */
  async onApplicationBootstrap(): Promise<void> {
    for (const [queue, handlers] of this.handlers) {
      this.running.push(this.start({ queue, handlers, inFlight: 0, lastActivity: 0 }));
    }
    await Promise.all(this.running.map(({ worker }) => worker.waitUntilReady()));
    this.watchdog = setInterval(() => {
      this.watching ??= this.watch()
        .catch((error: Error) => this.logger.warn({ error: error.message }, 'could not check the workers'))
        .finally(() => (this.watching = undefined));
    }, WATCH_INTERVAL_MS);
    this.watchdog.unref();
  }

  /**
   * Replaces each worker that every check since STUCK_AFTER_MS ago found idle while its queue held waiting jobs;
   * a job started or finished in between, or a check finding none waiting, starts the count again.
   */
  async watch(): Promise<void> {
    const now = Date.now();
    for (const running of this.running) {
      const { queue } = running;
      const idle = running.inFlight === 0;
      const waiting = idle ? ((await this.jobs.queue(queue).getJobCounts('waiting')).waiting ?? 0) : 0;
      const since = running.idleWithWaitingSince;
      if (waiting === 0) running.idleWithWaitingSince = undefined;
      else if (since === undefined || running.lastActivity >= since) running.idleWithWaitingSince = now;
      else if (now - since >= STUCK_AFTER_MS) this.replace(running, waiting, now - since);
    }
  }

  private replace(running: Running, waiting: number, idleMs: number): void {
    const { queue } = running;
    this.logger.warn({ queue, waiting, idleMs }, 'worker took no waiting job; starting it again');
    this.metrics.workerRestarted(queue);
    const stuck = running.worker;
    this.start(running);
    // Forced: it has no job in hand. Not waited for beyond a bound, nor allowed to fail the watch.
    const bound = new Promise((resolve) => setTimeout(resolve, STUCK_CLOSE_MS).unref());
    void Promise.race([stuck.close(true), bound]).catch(() => undefined);
  }

  /** Starts the queue's BullMQ worker (again, for one replaced), its events counted on `running`. */
  private start(running: Omit<Running, 'worker'>): Running {
    const { queue, handlers } = running;
    const run = async (job: Job) => {
      const handler = handlers.get(job.name);
      if (!handler) throw new UnrecoverableError(`No handler for job "${job.name}" on queue "${queue}"`);
      return handler.run(job);
    };
    // The backend attaches the worker's error listener.
    const worker = this.backend.createWorker(queue, (job) => this.counted(running, () => run(job)), {
      concurrency: this.config.workerConcurrency,
      lockDuration: this.config.jobLockMs,
      stalledInterval: this.config.jobStalledCheckMs,
    });
    const started = Object.assign(running, {
      worker,
      inFlight: 0,
      lastActivity: Date.now(),
      idleWithWaitingSince: undefined,
    });
    worker.on('active', (job) => {
      this.metrics.started(queue, job);
      const requestId = (job.data as { enqueuedBy?: { requestId?: string } } | undefined)?.enqueuedBy?.requestId;
      const line = { queue, job: job.name, jobId: job.id, attempt: job.attemptsMade + 1, requestId };
      if (scheduled(job)) this.logger.debug(line, 'job started');
      else this.logger.log(line, 'job started');
    });
    // A failure a handler recorded itself (`jobFailed`) ends the job failed, so it arrives below.
    worker.on('completed', (job) => this.finished(queue, job, 'completed'));
    worker.on('failed', (job, error) => {
      if (!job) return;
      const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
      this.finished(queue, job, final ? 'failed' : 'retrying', error.message);
    });
    return started;
  }

  private async counted<T>(running: Pick<Running, 'inFlight' | 'lastActivity'>, work: () => Promise<T>): Promise<T> {
    running.inFlight++;
    running.lastActivity = Date.now();
    try {
      return await work();
    } finally {
      running.inFlight--;
      running.lastActivity = Date.now();
    }
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
    clearInterval(this.watchdog);
    await this.watching;
    await Promise.all(this.running.map(({ worker }) => worker.close()));
  }
}

/** Whether a job was started by a schedule (BullMQ's job schedulers name their jobs `repeat:...`). */
function scheduled(job: Job): boolean {
  return job.id?.startsWith('repeat:') ?? false;
}
