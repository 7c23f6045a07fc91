import { type DynamicModule, Module } from '@nestjs/common';
import { OUTBOUND_USER_AGENT, OutboundHttp } from './outbound-http.service';

@Module({})
export class OutboundHttpModule {
  /** `userAgent` is how this process introduces itself to the servers it calls. */
  static forRoot(userAgent: string): DynamicModule {
    return {
      module: OutboundHttpModule,
      providers: [OutboundHttp, { provide: OUTBOUND_USER_AGENT, useValue: userAgent }],
      exports: [OutboundHttp],
    };
  }
}
