import { Module } from '@nestjs/common';
import { ProviderReconcile } from './provider-reconcile.service';
import { sipProvisionerProvider } from './sip-provisioner.provider';
import { SipTrunkProvisioning } from './sip-trunk-provisioning.service';

/**
 * SIP trunk provisioning at the telephony provider, inbound dispatch, the clean-up of trunks it no longer uses, and
 * the reconcile.
 */
@Module({
  providers: [sipProvisionerProvider, SipTrunkProvisioning, ProviderReconcile],
})
export class TelephonyModule {}
