import { DynamicModule, Module, Provider } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { ShutdownState } from './shutdown-state';

/** `GET /health` and `GET /health/ready`; pass a READINESS_CHECKS provider to add app-specific checks. */
@Module({})
export class HealthModule {
  static forRoot(extraProviders: Provider[] = []): DynamicModule {
    return {
      module: HealthModule,
      controllers: [HealthController],
      providers: [HealthService, ShutdownState, ...extraProviders],
    };
  }
}
