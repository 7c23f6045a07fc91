export * from './job-definitions';
export * from './job-processor';
export * from './job-queue.service';
export * from './jobs.module';
export * from './queue-backend';
export * from './job-failure';
