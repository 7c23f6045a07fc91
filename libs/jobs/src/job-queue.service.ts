import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { currentRequestId, MetricsRegistry, withTimeout } from '@app/platform';
import { Queues, type JobDefinition, type QueueName } from './job-definitions';
import { QueueBackend } from './queue-backend';

/** A request waits at most this long for the queue backend to take a job before it is told to retry. */
const ENQUEUE_TIMEOUT_MS = 3000;
/** A probe of the backend (readiness, a metrics scrape) gives up after this long. */
const PROBE_TIMEOUT_MS = 2000;

/**
 * States in which BullMQ still owns a job (to run, running, or to retry): a sweep that finds its row waiting leaves
 * it alone. Any other state, or no job at all, means the work must be queued again.
 */
export const LIVE_JOB_STATES: ReadonlySet<string> = new Set([
  'active',
  'waiting',
  'delayed',
  'prioritized',
  'waiting-children',
]);

/** Typed producer: the only way work is put on a queue. */
@Injectable()
export class JobQueue implements OnModuleInit, OnApplicationShutdown {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly enqueueFailures: Counter<'queue' | 'job'>;

  constructor(
    private readonly backend: QueueBackend,
    private readonly config: AppConfig,
    registry: MetricsRegistry,
  ) {
    this.enqueueFailures = new Counter({
      name: 'job_enqueue_failures_total',
      help: 'Jobs this process failed to put on a queue (its backend unreachable or too slow), by queue and job',
      labelNames: ['queue', 'job'],
      registers: [registry],
    });
    const probe = () => this.probe();
    new Gauge({
      name: 'queue_backend_up',
      help: 'Whether the queue backend (label: redis or postgres) answered when scraped: 1 yes, 0 no',
      labelNames: ['backend'],
      registers: [registry],
      async collect() {
        this.set(
          { backend: backend.kind },
          await probe().then(
            () => 1,
            () => 0,
          ),
        );
      },
    });
  }

  /** One round trip to the queue backend (a job count); resolves with which backend it is and where. */
  async probe(): Promise<Record<string, unknown>> {
    await withTimeout(
      this.queue(Queues.maintenance).getJobCounts('waiting'),
      PROBE_TIMEOUT_MS,
      'queue backend probe timed out',
    );
    return this.backend.describe();
  }

  /**
   * Connects every queue at boot: producers fail fast rather than wait for a connection, so one made on the
   * first request would turn that request away.
   */
  onModuleInit(): void {
    this.allQueues();
  }

  /** Runs after the worker's consumers have stopped (they close before application shutdown). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close().catch(() => queue.disconnect())));
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = this.backend.createQueue(name);
      this.queues.set(name, queue);
    }
    return queue;
  }

  allQueues(): Queue[] {
    return Object.values(Queues).map((name) => this.queue(name));
  }

  /** The options a job of this definition is added with: its defaults, the configured retry delay, its id. */
  optionsFor<Payload>(definition: JobDefinition<Payload>, payload: Payload, options: JobsOptions = {}): JobsOptions {
    const backoff = definition.options.backoff;
    return {
      ...definition.options,
      ...(typeof backoff === 'object' && backoff.delay === undefined
        ? { backoff: { ...backoff, delay: this.config.jobRetryDelayMs } }
        : {}),
      ...(definition.jobId ? { jobId: definition.jobId(payload) } : {}),
      ...options,
    };
  }

  /**
   * Adds a job. With a deterministic `jobId`, re-enqueueing the same work (a retrying caller, the sweeper)
   * is a no-op while BullMQ still knows the job.
   */
  async enqueue<Payload>(
    definition: JobDefinition<Payload>,
    payload: Payload,
    options: JobsOptions = {},
  ): Promise<Job> {
    // The request that asked for the work travels with it, so the job's log lines can be joined to the request's.
    const requestId = currentRequestId();
    const add = () =>
      this.queue(definition.queue).add(
        definition.name,
        requestId ? { ...payload, enqueuedBy: { requestId } } : payload,
        this.optionsFor(definition, payload, options),
      );
    const adding = async (): Promise<Job> => {
      const started = Date.now();
      const job = await add();
      // An id naming a job that is still to run dedupes, as meant. One naming a finished job (kept for history)
      // would swallow the new work: after a database restore, or a database recreated against the same queues, a
      // new row reuses an old row's id. Handlers re-read their row, so running the work again is always safe.
      // Only a deterministic id can be taken; `add` then answers with the job it meant to add, so the stored one
      // tells which it was.
      if (!definition.jobId) return job;
      const stored = job.id ? await this.queue(definition.queue).getJob(job.id) : undefined;
      if (!stored || stored.timestamp >= started) return job;
      const state = await stored.getState();
      if (state !== 'completed' && state !== 'failed') return stored;
      try {
        await stored.remove();
      } catch (error) {
        // A concurrent enqueue of the same work replaced the finished job first and its job is already running
        // (locked): that one does the work.
        const current = await this.queue(definition.queue).getJob(stored.id!);
        if (current && current.timestamp !== stored.timestamp) return current;
        throw error;
      }
      return add();
    };
    try {
      return await withTimeout(adding(), ENQUEUE_TIMEOUT_MS, `Enqueueing ${definition.name} timed out`);
    } catch (error) {
      this.enqueueFailures.inc({ queue: definition.queue, job: definition.name });
      throw error;
    }
  }
}

/** The queue backend's readiness check, `queue_backend`: which backend, where, and whether it answers. */
export function queueBackendReadiness(jobs: JobQueue): Record<string, () => Promise<Record<string, unknown>>> {
  return { queue_backend: () => jobs.probe() };
}
