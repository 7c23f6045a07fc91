import { SetMetadata } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Job } from 'bullmq';
import type { JobDefinition } from './job-definitions';
import { type JobDone, type JobResult, settle } from './job-result';

const HANDLED_JOB = Symbol('handled job');

/** The shape of a job's handler: the job's payload, then (for its attempts) the BullMQ job; a JobResult back. */
export type JobHandlerMethod<Payload> = (payload: Payload, job: Job<Payload>) => Promise<JobResult>;

/**
 * Marks the service method that does a job's work: `@HandlesJob(Jobs.placeCall) async place({ callId }: CallJob)`.
 * The compiler holds the method to the definition: its first parameter takes that job's payload (a scheduled job's
 * handler takes none), a second, if any, the job, and it resolves to a JobResult. The worker finds the marked methods
 * of its providers at boot (`discoverJobHandlers`).
 */
export function HandlesJob<Payload>(definition: JobDefinition<Payload>) {
  return <Method extends JobHandlerMethod<Payload>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<Method>,
  ): void => {
    SetMetadata(HANDLED_JOB, definition)(target, key, descriptor);
  };
}

/** A marked method bound to its provider's instance. */
export interface JobHandler {
  readonly definition: JobDefinition<unknown>;
  /** `CallPlacer.place`, for the boot checks. */
  readonly location: string;
  /** Runs the method on the job's payload; a failure it recorded (`jobFailed`) ends the job failed, without retries. */
  run(job: Job): Promise<JobDone>;
}

const label = (definition: JobDefinition<unknown>) => `${definition.queue}/${definition.name}`;

/**
 * Every method marked `@HandlesJob` on the app's providers, bound to its instance, and why together they cannot run
 * the declared jobs: a job nothing handles (it would pile up unseen), a job handled twice (by two methods, or by one
 * class provided twice), a handler on a request-scoped or transient provider (the worker serves no request, so no
 * instance of such a provider would run it).
 */
export function discoverJobHandlers(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  declared: readonly JobDefinition<unknown>[],
): { handlers: JobHandler[]; problems: string[] } {
  const handlers: JobHandler[] = [];
  const problems: string[] = [];
  // An alias (`useExisting`) shows the same instance under another token.
  const seen = new Set<object>();
  for (const wrapper of discovery.getProviders()) {
    const instance: unknown = wrapper.instance;
    if (typeof instance !== 'object' || instance === null || seen.has(instance)) continue;
    seen.add(instance);
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const method = prototype![name] as (payload: unknown, job: Job) => Promise<JobResult>;
      const definition = Reflect.getMetadata(HANDLED_JOB, method) as JobDefinition<unknown> | undefined;
      if (!definition) continue;
      const location = `${instance.constructor.name}.${name}`;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        problems.push(`${location} handles ${label(definition)} on a request-scoped or transient provider`);
        continue;
      }
      handlers.push({
        definition,
        location,
        run: async (job) => settle(job, await method.call(instance, job.data, job)),
      });
    }
  }
  for (const definition of declared) {
    const found = handlers.filter((handler) => handler.definition === definition);
    if (found.length === 0) problems.push(`no method handles ${label(definition)}`);
    if (found.length > 1) {
      const where = found.map((handler) => handler.location).join(', ');
      problems.push(`${label(definition)} is handled ${found.length} times (${where})`);
    }
  }
  return { handlers, problems };
}

/** True when this run of the job is its last: the caller should record the failure rather than rethrow. */
export function isFinalAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}
