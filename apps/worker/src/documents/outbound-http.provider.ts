import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { OutboundHttpClient } from '@app/outbound-http';

/** How the crawler introduces itself to the sites it reads (and to their robots.txt). */
export const CRAWLER_USER_AGENT = 'VoiceAssistantKnowledgeBot/1.0 (+knowledgebase crawler)';

/**
 * The worker's one guarded HTTP client. Its pool is closed at the very end of shutdown, after the job runner
 * (in beforeApplicationShutdown) has let the jobs in hand finish their requests.
 */
@Injectable()
export class OutboundHttp implements OnApplicationShutdown {
  readonly client: OutboundHttpClient;

  constructor(config: AppConfig) {
    this.client = new OutboundHttpClient({
      allowLoopback: config.outboundAllowLoopback,
      userAgent: CRAWLER_USER_AGENT,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
