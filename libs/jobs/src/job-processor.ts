import { WorkerHost } from '@nestjs/bullmq';
import { Job, UnrecoverableError } from 'bullmq';
import type { JobDefinition, QueueName } from './job-definitions';

export type JobHandler = (job: Job) => Promise<unknown>;

/**
 * Base of every queue consumer: maps job names to handlers. The worker checks at boot that every declared
 * job has one, so a job added to the contract cannot silently pile up unconsumed.
 */
export abstract class JobProcessor extends WorkerHost {
  abstract readonly queueName: QueueName;
  protected abstract readonly handlers: Record<string, JobHandler>;

  handles(definition: JobDefinition<unknown>): boolean {
    return definition.queue === this.queueName && definition.name in this.handlers;
  }

  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new UnrecoverableError(`No handler for job "${job.name}" on queue "${this.queueName}"`);
    return handler(job);
  }
}
