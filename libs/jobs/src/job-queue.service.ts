import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { Counter } from 'prom-client';
import { AppConfig } from '@app/config';
import { currentRequestId, MetricsRegistry } from '@app/platform';
import { Queues, type JobDefinition, type QueueName } from './job-definitions';
import { QueueBackend } from './queue-backend';

/** A request waits at most this long for the queue backend to take a job before it is told to retry. */
const ENQUEUE_TIMEOUT_MS = 3000;

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
    const adding = this.queue(definition.queue).add(
      definition.name,
      requestId ? { ...payload, enqueuedBy: { requestId } } : payload,
      this.optionsFor(definition, payload, options),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Enqueueing ${definition.name} timed out`)), ENQUEUE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([adding, timeout]);
    } catch (error) {
      this.enqueueFailures.inc({ queue: definition.queue, job: definition.name });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}
