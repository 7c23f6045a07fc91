import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { Counter, Gauge, Histogram } from 'prom-client';
import { JobQueue } from '@app/jobs';
import { MetricsRegistry } from '@app/platform';

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** What the worker reports about its jobs. Every attempt counts: a retried job is seen once per run. */
@Injectable()
export class JobMetrics {
  private readonly finished: Counter<'queue' | 'job' | 'outcome'>;
  private readonly duration: Histogram<'queue' | 'job'>;
  private readonly wait: Histogram<'queue' | 'job'>;
  private readonly documents: Counter<'type' | 'outcome'>;
  private readonly dials: Counter<'outcome'>;
  private readonly requeued: Counter<'job'>;
  private readonly restarted: Counter<'queue'>;
  private largeFiles?: { activeCount: number; pendingCount: number };

  constructor(registry: MetricsRegistry, jobs: JobQueue) {
    this.finished = new Counter({
      name: 'jobs_finished_total',
      help:
        'Job attempts run by this worker, by queue, job name and outcome: completed, failed (the work ended in ' +
        'a recorded failure, or the last attempt threw) or retrying (an attempt threw and another will follow)',
      labelNames: ['queue', 'job', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'job_duration_seconds',
      help: 'Time from an attempt starting to finishing on this worker',
      labelNames: ['queue', 'job'],
      buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 180, 600],
      registers: [registry],
    });
    this.wait = new Histogram({
      name: 'job_wait_seconds',
      help: 'Time a job waited in its queue (after any delay or backoff) before an attempt started',
      labelNames: ['queue', 'job'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
      registers: [registry],
    });
    this.documents = new Counter({
      name: 'documents_processed_total',
      help: 'Documents that reached a final state on this worker, by type and outcome (active, failed)',
      labelNames: ['type', 'outcome'],
      registers: [registry],
    });
    this.dials = new Counter({
      name: 'calls_dialled_total',
      help: 'Outbound calls this worker asked the dialer to place, by outcome (dialled, or failed at the provider)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.requeued = new Counter({
      name: 'jobs_requeued_total',
      help:
        'Jobs a sweep queued again because the row still waited on work whose job was gone (lost with a Redis ' +
        'master that died before its replica had it, or with the queue data), by job name',
      labelNames: ['job'],
      registers: [registry],
    });
    this.restarted = new Counter({
      name: 'workers_restarted_total',
      help:
        "Times this process replaced a queue's worker that had taken no job for 30 s while the queue held waiting " +
        'ones (a fetch left hanging by a Redis failover), by queue',
      labelNames: ['queue'],
      registers: [registry],
    });
    const largeFiles = () => this.largeFiles;
    new Gauge({
      name: 'large_files_in_work',
      help:
        'Files of 4 MiB or more this worker is reading (active) or holding until one of its ' +
        'WORKER_LARGE_FILES_AT_ONCE turns frees (waiting)',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        this.set({ state: 'active' }, largeFiles()?.activeCount ?? 0);
        this.set({ state: 'waiting' }, largeFiles()?.pendingCount ?? 0);
      },
    });
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs per queue and state, read from the queue backend when scraped',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        // While the queue backend is away the last counts stay; the scrape itself must not fail.
        await Promise.all(
          jobs.allQueues().map(async (queue) => {
            const counts = await queue.getJobCounts(...JOB_STATES).catch(() => undefined);
            for (const state of JOB_STATES) if (counts) this.set({ queue: queue.name, state }, counts[state] ?? 0);
          }),
        );
      },
    });
  }

  started(queue: string, job: Job): void {
    const readyAt = job.timestamp + (job.opts.delay ?? 0);
    if (job.processedOn) this.wait.observe({ queue, job: job.name }, Math.max(0, job.processedOn - readyAt) / 1000);
  }

  /** Returns the attempt's duration in milliseconds, for the log line. */
  finishedAttempt(queue: string, job: Job, outcome: 'completed' | 'failed' | 'retrying'): number | undefined {
    this.finished.inc({ queue, job: job.name, outcome });
    if (!job.processedOn) return undefined;
    const milliseconds = Math.max(0, Date.now() - job.processedOn);
    this.duration.observe({ queue, job: job.name }, milliseconds / 1000);
    return milliseconds;
  }

  documentFinished(type: string, outcome: 'active' | 'failed'): void {
    this.documents.inc({ type, outcome });
  }

  callDialled(outcome: 'dialled' | 'failed'): void {
    this.dials.inc({ outcome });
  }

  /** Reports the large files in work from the limit that holds them (DocumentIngestion's). */
  watchLargeFiles(limit: { activeCount: number; pendingCount: number }): void {
    this.largeFiles = limit;
  }

  workerRestarted(queue: string): void {
    this.restarted.inc({ queue });
  }

  jobsRequeued(job: string, count: number): void {
    if (count > 0) this.requeued.inc({ job }, count);
  }
}
