import { Counter, Histogram, register } from 'prom-client';

export const jobsFinished = new Counter({
  name: 'jobs_finished_total',
  help: 'Jobs run by this worker, by queue, job name and outcome (completed, failed)',
  labelNames: ['queue', 'job', 'outcome'],
  registers: [register],
});

export const jobDuration = new Histogram({
  name: 'job_duration_seconds',
  help: 'Time from a job starting to finishing on this worker',
  labelNames: ['queue', 'job'],
  buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 180, 600],
  registers: [register],
});
