import type { Provider } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { LiveKitSipProvisioner, LocalSipProvisioner, SIP_PROVISIONER, type SipProvisioner } from '@app/telephony';

/** The provider adapter chosen by SIP_PROVISIONER (`local` for development and tests, `livekit`). */
export const sipProvisionerProvider: Provider = {
  provide: SIP_PROVISIONER,
  inject: [AppConfig],
  useFactory: (config: AppConfig): SipProvisioner =>
    config.sipProvisioner === 'livekit' && config.livekit
      ? new LiveKitSipProvisioner(config.livekit)
      : new LocalSipProvisioner(),
};
