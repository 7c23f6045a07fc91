import type { Provider } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { LocalCallControlRepository } from '@app/database';
import { CALL_CONTROL, type CallControl, LiveKitCallControl, LocalCallControl } from '@app/telephony';

/**
 * Live call control at the provider that places the calls: chosen by CALL_DIALER (`local`, the default, or
 * `livekit`). The local one records every operation in `local_call_control_requests` and signs participant tokens
 * with the configured LiveKit key when there is one.
 */
export const callControlProvider: Provider = {
  provide: CALL_CONTROL,
  inject: [AppConfig, LocalCallControlRepository],
  useFactory: (config: AppConfig, log: LocalCallControlRepository): CallControl =>
    config.callDialer === 'livekit' && config.livekit
      ? new LiveKitCallControl(config.livekit, config.livekitAgentName)
      : new LocalCallControl({ log, agentName: config.livekitAgentName, livekit: config.livekit }),
};
