import { Jobs, JobProcessor, Queues } from '@app/jobs';
import { AppConfig } from '@app/config';
import { ProcessorRegistry } from './processor-registry';

class EmptyMaintenanceProcessor extends JobProcessor {
  readonly queueName = Queues.maintenance;
  protected readonly handlers = {};
}

class CompleteMaintenanceProcessor extends JobProcessor {
  readonly queueName = Queues.maintenance;
  protected readonly handlers = Object.fromEntries(
    Object.values(Jobs).map((definition) => [definition.name, async () => undefined]),
  );
}

describe('ProcessorRegistry', () => {
  const config = { workerConcurrency: 2 } as AppConfig;

  it('refuses to boot when a declared job has no handler, naming it', () => {
    const registry = new ProcessorRegistry(config, [new EmptyMaintenanceProcessor()]);
    expect(() => registry.onModuleInit()).toThrow(`maintenance/${Jobs.purgeExpiredSessions.name}`);
  });

  it('boots when every declared job is handled', () => {
    const registry = new ProcessorRegistry(config, [new CompleteMaintenanceProcessor()]);
    expect(() => registry.onModuleInit()).not.toThrow();
  });
});
