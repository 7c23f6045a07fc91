import { type Job, UnrecoverableError } from 'bullmq';
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

  /**
   * Runs the job's handler. A handler that records a failure itself (a document that cannot be parsed, an import
   * of an unreadable file, a dial the provider refused) returns `{status: 'failed'}` after writing it to Postgres;
   * the job then ends failed, without retries, so the queue dashboard and `jobs_finished_total` say failed too.
   */
  async process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name];
    if (!handler) throw new UnrecoverableError(`No handler for job "${job.name}" on queue "${this.queueName}"`);
    const result = await handler(job);
    if ((result as { status?: unknown } | undefined)?.status === 'failed')
      throw new UnrecoverableError(`${job.name} failed; the reason is recorded with what it worked on`);
    return result;
  }
}

/** True when this run of the job is its last: the caller should record the failure rather than rethrow. */
export function isFinalAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}
