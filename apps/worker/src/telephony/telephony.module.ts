import { Module } from '@nestjs/common';
import { ProviderReconcile } from './provider-reconcile.service';
import { sipProvisionerProvider } from './sip-provisioner.provider';
import { SipTrunkProvisioning } from './sip-trunk-provisioning.service';
import { TelephonyProcessor } from './telephony.processor';

/** SIP trunk provisioning at the telephony provider, the clean-up of trunks it no longer uses, and the reconcile. */
@Module({
  providers: [sipProvisionerProvider, SipTrunkProvisioning, ProviderReconcile, TelephonyProcessor],
  exports: [TelephonyProcessor],
})
export class TelephonyModule {}
