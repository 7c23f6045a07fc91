import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { OutboundHttpClient } from '@app/outbound-http';
import { ToolExecutor } from '@app/tools';

/** How tool calls introduce themselves to the user's endpoint. */
export const TOOL_USER_AGENT = 'VoiceAssistantTools/1.0';

/** The API's executor for test calls, on its own guarded client, closed at shutdown. */
@Injectable()
export class ApiToolExecutor extends ToolExecutor implements OnApplicationShutdown {
  private readonly client: OutboundHttpClient;

  constructor(config: AppConfig) {
    const client = new OutboundHttpClient({ allowLoopback: config.outboundAllowLoopback, userAgent: TOOL_USER_AGENT });
    super(client);
    this.client = client;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
