import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { InboundDispatchJob, JobHandler, JobProcessor, Jobs, Queues, SipProvisioningJob } from '@app/jobs';
import { ProviderReconcile } from './provider-reconcile.service';
import { SipTrunkProvisioning } from './sip-trunk-provisioning.service';

@Injectable()
export class TelephonyProcessor extends JobProcessor {
  readonly queueName = Queues.telephony;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.provisionSipTrunk.name]: (job) => this.provisioning.process((job as Job<SipProvisioningJob>).data.requestId),
    [Jobs.cleanUpProviderTrunks.name]: () => this.provisioning.cleanUp(),
    [Jobs.reconcileProviderTrunks.name]: () => this.reconciler.reconcile(),
    [Jobs.refreshInboundDispatch.name]: (job) =>
      this.provisioning.refreshDispatch((job as Job<InboundDispatchJob>).data.phoneNumberId),
  };

  constructor(
    private readonly provisioning: SipTrunkProvisioning,
    private readonly reconciler: ProviderReconcile,
  ) {
    super();
  }
}
