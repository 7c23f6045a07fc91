import { type Job, UnrecoverableError } from 'bullmq';
import type { FailureReason } from './job-failure';

type SummaryValue =
  string | number | boolean | null | readonly SummaryValue[] | { readonly [key: string]: SummaryValue };

/**
 * What a job that ended well did, in a few fields (`{ status: 'skipped' }`, `{ requeued: 2 }`): BullMQ keeps it as the
 * job's return value, which the queue dashboard shows. JSON only, since that is how it is stored.
 */
export type JobSummary = { readonly [key: string]: SummaryValue };

/** A job that ended well: its summary, or nothing to report. */
export type JobDone = JobSummary | void;

/**
 * A job whose handler recorded its failure on what it worked on (a document that cannot be parsed, an import of an
 * unreadable file, a dial the provider refused). Only `jobFailed` makes one, and the worker recognises it by its class,
 * never by its shape: a summary saying `failed` is still a job done.
 */
class JobFailed {
  declare private readonly nominal: never;

  constructor(readonly reason: FailureReason) {}
}
export type { JobFailed };

/** What every job handler returns: done (with a summary or none) or failed for a recorded reason. */
export type JobResult = JobDone | JobFailed;

/**
 * Ends the job failed, without retries, after its handler wrote why to Postgres: the queue dashboard and
 * `jobs_finished_total` say failed too, and the dashboard and the worker's log name the reason's class
 * (`process-document failed: content does not match the declared type`), never what the owner reads.
 */
export function jobFailed(reason: FailureReason): JobFailed {
  return new JobFailed(reason);
}

/** The job's return value when done; for a recorded failure, the error that ends it failed at once. */
export function settle(job: Job, result: JobResult): JobDone {
  if (result instanceof JobFailed) throw new UnrecoverableError(`${job.name} failed: ${result.reason}`);
  return result;
}
