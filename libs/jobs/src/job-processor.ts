import { type Job, UnrecoverableError } from 'bullmq';
import type { JobDefinition, QueueName } from './job-definitions';
import type { JobFailed } from './job-failure';

/** A handler bound to the definition of the job it handles, so the payload is typed where it is handled. */
export interface JobHandler {
  readonly definition: JobDefinition<unknown>;
  run(job: Job): Promise<unknown>;
}

/**
 * Binds a handler to its job's definition: `handle(Jobs.placeCall, (job) => placer.place(job.data.callId))`. The job
 * BullMQ hands over is the one queued with this definition's payload (`JobQueue.enqueue` takes nothing else).
 */
export function handle<Payload>(
  definition: JobDefinition<Payload>,
  handler: (job: Job<Payload>) => Promise<unknown>,
): JobHandler {
  return { definition: definition as JobDefinition<unknown>, run: (job: Job<Payload>) => handler(job) };
}

/**
 * A queue's consumer: the handlers of its jobs. The worker creates one BullMQ Worker per processor and checks at
 * boot that every declared job has exactly one handler, on its own queue's processor, so a job added to the contract
 * cannot pile up unseen nor be taken by two.
 */
export abstract class JobProcessor {
  abstract readonly queueName: QueueName;
  protected abstract readonly handlers: readonly JobHandler[];
  private byName?: Map<string, JobHandler>;

  /** The definitions this processor handles. */
  handled(): JobDefinition<unknown>[] {
    return this.handlers.map((handler) => handler.definition);
  }

  /**
   * Runs the job's handler. A handler that records a failure itself (a document that cannot be parsed, an import
   * of an unreadable file, a dial the provider refused) returns `jobFailed(reason)` after writing it to Postgres;
   * the job then ends failed, without retries, so the queue dashboard and `jobs_finished_total` say failed too, and
   * the dashboard and the worker's log name the reason's class (`process-document failed: content does not match
   * the declared type`), never what the owner reads.
   */
  async process(job: Job): Promise<unknown> {
    this.byName ??= new Map(this.handlers.map((handler) => [handler.definition.name, handler]));
    const handler = this.byName.get(job.name);
    if (!handler) throw new UnrecoverableError(`No handler for job "${job.name}" on queue "${this.queueName}"`);
    const result = await handler.run(job);
    const failed = result as Partial<JobFailed> | undefined;
    if (failed?.status === 'failed')
      throw new UnrecoverableError(`${job.name} failed: ${failed.reason ?? 'reason not classified'}`);
    return result;
  }
}

/**
 * Why a set of processors cannot run the declared jobs, or nothing: a job no processor handles, a job handled twice,
 * a handler on another queue's processor.
 */
export function handlerProblems(processors: readonly JobProcessor[], declared: JobDefinition<unknown>[]): string[] {
  const problems: string[] = [];
  const label = (definition: JobDefinition<unknown>) => `${definition.queue}/${definition.name}`;
  for (const processor of processors) {
    for (const definition of processor.handled()) {
      if (definition.queue !== processor.queueName) {
        problems.push(`${label(definition)} is handled on the ${processor.queueName} queue's processor`);
      }
    }
  }
  for (const definition of declared) {
    const count = processors
      .flatMap((processor) => processor.handled())
      .filter((handled) => handled === definition).length;
    if (count === 0) problems.push(`no processor handles ${label(definition)}`);
    if (count > 1) problems.push(`${label(definition)} is handled ${count} times`);
  }
  return problems;
}

/** True when this run of the job is its last: the caller should record the failure rather than rethrow. */
export function isFinalAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}
