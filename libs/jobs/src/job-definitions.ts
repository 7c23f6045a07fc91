import type { JobsOptions } from 'bullmq';

/** Queues, by purpose. Each queue can be consumed by a differently sized pool of workers. */
export const Queues = {
  maintenance: 'maintenance',
} as const;

export type QueueName = (typeof Queues)[keyof typeof Queues];

/** A job's name, queue, default options and (as a phantom type) its payload. */
export interface JobDefinition<Payload> {
  readonly name: string;
  readonly queue: QueueName;
  readonly options: JobsOptions;
  /** Never set; carries the payload type for `enqueue`. */
  readonly payload?: Payload;
}

function defineJob<Payload>(queue: QueueName, name: string, options: JobsOptions = {}): JobDefinition<Payload> {
  return { name, queue, options };
}

const keepHistory: JobsOptions = {
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

/**
 * The only contract between the API and the worker: payloads carry ids, Postgres carries state.
 * The worker refuses to boot while any job here lacks a handler.
 */
export const Jobs = {
  /** Deletes session tokens past their expiry. Repeats on the worker; carries no payload. */
  purgeExpiredSessions: defineJob<Record<string, never>>(Queues.maintenance, 'purge-expired-sessions', {
    ...keepHistory,
    attempts: 3,
    backoff: { type: 'exponential', delay: 5000 },
  }),
} as const;

export type JobKey = keyof typeof Jobs;
export type PayloadOf<Definition> = Definition extends JobDefinition<infer Payload> ? Payload : never;

export const allJobs = (): JobDefinition<unknown>[] => Object.values(Jobs);
