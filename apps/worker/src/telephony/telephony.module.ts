import { Module } from '@nestjs/common';
import { sipProvisionerProvider } from './sip-provisioner.provider';
import { SipTrunkProvisioning } from './sip-trunk-provisioning.service';
import { TelephonyProcessor } from './telephony.processor';

/** SIP trunk provisioning at the telephony provider, and the clean-up of trunks it no longer uses. */
@Module({
  providers: [sipProvisionerProvider, SipTrunkProvisioning, TelephonyProcessor],
  exports: [TelephonyProcessor],
})
export class TelephonyModule {}
