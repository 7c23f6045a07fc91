import { Global, Module } from '@nestjs/common';
import { JobMetrics } from './job-metrics';

/** Makes JobMetrics available to every worker module (the runner and the services that do the jobs). */
@Global()
@Module({ providers: [JobMetrics], exports: [JobMetrics] })
export class JobMetricsModule {}
