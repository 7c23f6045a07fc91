import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { Counter } from 'prom-client';
import { AppConfig } from '@app/config';
import { currentRequestId, MetricsRegistry } from '@app/platform';
import { Queues, type JobDefinition, type QueueName } from './job-definitions';

/** A request waits at most this long for Redis to take a job before it is told to retry. */
const ENQUEUE_TIMEOUT_MS = 3000;

/** Typed producer: the only way work is put on a queue. */
@Injectable()
export class JobQueue implements OnModuleInit {
  private readonly logger = new Logger(JobQueue.name);
  private readonly queues = new Map<QueueName, Queue>();
  private readonly enqueueFailures: Counter<'queue' | 'job'>;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly config: AppConfig,
    registry: MetricsRegistry,
  ) {
    this.enqueueFailures = new Counter({
      name: 'job_enqueue_failures_total',
      help: 'Jobs this process failed to put on a queue (Redis unreachable or too slow), by queue and job',
      labelNames: ['queue', 'job'],
      registers: [registry],
    });
  }

  /**
   * A Redis connection error on a queue is emitted as an event; without a listener it would be thrown as an
   * unhandled error (for instance when a process shuts down while a connection is still being set up).
   */
  onModuleInit(): void {
    for (const queue of this.allQueues()) {
      queue.on('error', (error) =>
        this.logger.warn({ queue: queue.name, error: error.message }, 'queue connection error'),
      );
    }
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
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
