import { getQueueToken } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { Queues, type JobDefinition, type QueueName } from './job-definitions';

/** Typed producer: the only way the API puts work on a queue. */
@Injectable()
export class JobQueue {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(private readonly moduleRef: ModuleRef) {}

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

  /**
   * Adds a job. A deterministic `jobId` makes re-enqueueing the same work (by a retrying caller or the sweeper)
   * a no-op while the job is still known to BullMQ.
   */
  enqueue<Payload>(definition: JobDefinition<Payload>, payload: Payload, options: JobsOptions = {}): Promise<Job> {
    return this.queue(definition.queue).add(definition.name, payload, { ...definition.options, ...options });
  }
}
