import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { OutboundHttpClient } from './outbound-http.client';

/** How this process introduces itself to the servers it calls (`OutboundHttpModule.forRoot`). */
export const OUTBOUND_USER_AGENT = 'OUTBOUND_USER_AGENT';

/**
 * A process's one guarded HTTP client, configured from `OUTBOUND_ALLOW_LOOPBACK`. Its pool is closed at the very
 * end of shutdown, after the worker's job runner (in beforeApplicationShutdown) has let the jobs in hand finish.
 */
@Injectable()
export class OutboundHttp implements OnApplicationShutdown {
  readonly client: OutboundHttpClient;

  constructor(config: AppConfig, @Inject(OUTBOUND_USER_AGENT) userAgent: string) {
    this.client = new OutboundHttpClient({ allowLoopback: config.outboundAllowLoopback, userAgent });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
