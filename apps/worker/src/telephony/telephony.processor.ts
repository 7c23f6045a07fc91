import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobHandler, JobProcessor, Jobs, Queues, SipProvisioningJob } from '@app/jobs';
import { SipTrunkProvisioning } from './sip-trunk-provisioning.service';

@Injectable()
export class TelephonyProcessor extends JobProcessor {
  readonly queueName = Queues.telephony;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.provisionSipTrunk.name]: (job) => this.provisioning.process((job as Job<SipProvisioningJob>).data.requestId),
    [Jobs.cleanUpProviderTrunks.name]: () => this.provisioning.cleanUp(),
  };

  constructor(private readonly provisioning: SipTrunkProvisioning) {
    super();
  }
}
