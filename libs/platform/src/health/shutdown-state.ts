import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '@app/config';

/**
 * Tells readiness that the process is going away. On SIGTERM readiness turns 503 at once while the process
 * keeps serving for SHUTDOWN_DRAIN_SECONDS, so a load balancer stops routing to it before its connections
 * close. A close without a signal (tests, a failed boot) does not wait.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ShutdownState.name);
  private draining = false;

  constructor(private readonly config: AppConfig) {}

  get isDraining(): boolean {
    return this.draining;
  }

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    this.draining = true;
    if (!signal || this.config.shutdownDrainSeconds === 0) return;
    this.logger.log({ signal, drainSeconds: this.config.shutdownDrainSeconds }, 'draining before shutdown');
    await sleep(this.config.shutdownDrainSeconds * 1000);
  }
}
