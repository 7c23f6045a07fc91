import { Job, UnrecoverableError } from 'bullmq';
import type { JobDefinition, QueueName } from './job-definitions';

export type JobHandler = (job: Job) => Promise<unknown>;

/**
 * A queue's consumer: maps job names to handlers. The worker creates one BullMQ Worker per processor and
 * checks at boot that every declared job has a handler, so a job added to the contract cannot pile up unseen.
 */
export abstract class JobProcessor {
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

/** True when this run of the job is its last: the caller should record the failure rather than rethrow. */
export function isFinalAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}
