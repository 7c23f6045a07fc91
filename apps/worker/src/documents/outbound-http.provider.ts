import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { OutboundHttpClient } from '@app/outbound-http';

/** How the crawler introduces itself to the sites it reads (and to their robots.txt). */
export const CRAWLER_USER_AGENT = 'VoiceAssistantKnowledgeBot/1.0 (+knowledgebase crawler)';

/** The worker's one guarded HTTP client; its connection pool is closed on shutdown. */
@Injectable()
export class OutboundHttp implements OnModuleDestroy {
  readonly client: OutboundHttpClient;

  constructor(config: AppConfig) {
    this.client = new OutboundHttpClient({
      allowLoopback: config.outboundAllowLoopback,
      userAgent: CRAWLER_USER_AGENT,
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.close();
  }
}
