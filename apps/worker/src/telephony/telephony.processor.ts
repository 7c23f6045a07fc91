import { Injectable } from '@nestjs/common';
import { handle, JobProcessor, Jobs, Queues } from '@app/jobs';
import { ProviderReconcile } from './provider-reconcile.service';
import { SipTrunkProvisioning } from './sip-trunk-provisioning.service';

@Injectable()
export class TelephonyProcessor extends JobProcessor {
  readonly queueName = Queues.telephony;

  protected readonly handlers = [
    handle(Jobs.provisionSipTrunk, (job) => this.provisioning.process(job.data.requestId)),
    handle(Jobs.cleanUpProviderTrunks, () => this.provisioning.cleanUp()),
    handle(Jobs.reconcileProviderTrunks, () => this.reconciler.reconcile()),
    handle(Jobs.refreshInboundDispatch, (job) => this.provisioning.refreshDispatch(job.data.phoneNumberId)),
  ];

  constructor(
    private readonly provisioning: SipTrunkProvisioning,
    private readonly reconciler: ProviderReconcile,
  ) {
    super();
  }
}
