import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { JobProcessor, allJobs } from '@app/jobs';

export const JOB_PROCESSORS = Symbol('JOB_PROCESSORS');

/**
 * Checks at boot that every declared job has a consumer (a job added to the contract must not pile up
 * unconsumed) and applies the configured concurrency to each queue's BullMQ worker.
 */
@Injectable()
export class ProcessorRegistry implements OnModuleInit {
  constructor(
    private readonly config: AppConfig,
    @Inject(JOB_PROCESSORS) private readonly processors: JobProcessor[],
  ) {}

  onModuleInit(): void {
    const missing = allJobs().filter(
      (definition) => !this.processors.some((processor) => processor.handles(definition)),
    );
    if (missing.length > 0) {
      const names = missing.map((definition) => `${definition.queue}/${definition.name}`).join(', ');
      throw new Error(`No processor handles these declared jobs: ${names}`);
    }
  }

  /** BullMQ creates the workers during module init; they exist by now. */
  onApplicationBootstrap(): void {
    for (const processor of this.processors) processor.worker.concurrency = this.config.workerConcurrency;
  }
}
