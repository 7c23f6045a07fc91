export * from './job-definitions';
export * from './job-handler';
export { type JobDone, type JobFailed, type JobResult, type JobSummary, jobFailed } from './job-result';
export * from './job-queue.service';
export * from './jobs.module';
export * from './queue-backend';
export * from './job-failure';
export * from './live-signals';
