import { SipClient } from 'livekit-server-sdk';
import {
  InboundTrunkSpec,
  OutboundTrunkSpec,
  ProvisionedInbound,
  SipProvisioner,
  SipProvisioningError,
} from './sip-provisioner';

export interface LiveKitSettings {
  url: string;
  apiKey: string;
  apiSecret: string;
}

/** LiveKit's SIPTransport.SIP_TRANSPORT_AUTO. */
const TRANSPORT_AUTO = 0;
/** How long one provider call may take before the step fails. */
const REQUEST_TIMEOUT_SECONDS = 10;

/**
 * SIP trunks at LiveKit through its Twirp API (`livekit-server-sdk`'s SipClient): an inbound trunk with its
 * numbers and either allowed addresses or digest credentials, plus a dispatch rule scoped to it that puts each
 * call in a room of its own for the agent; an outbound trunk with the carrier's address, numbers, credentials and
 * destination country.
 */
export class LiveKitSipProvisioner implements SipProvisioner {
  private readonly client: SipClient;

  constructor(settings: LiveKitSettings) {
    this.client = new SipClient(settings.url, settings.apiKey, settings.apiSecret, {
      requestTimeout: REQUEST_TIMEOUT_SECONDS,
    });
  }

  async createInboundTrunk(spec: InboundTrunkSpec): Promise<ProvisionedInbound> {
    const trunk = await this.step('create the inbound trunk', () =>
      this.client.createSipInboundTrunk(spec.name, spec.numbers, {
        ...(spec.allowedAddresses ? { allowedAddresses: spec.allowedAddresses } : {}),
        ...(spec.credentials
          ? { authUsername: spec.credentials.username, authPassword: spec.credentials.password }
          : {}),
      }),
    );
    try {
      const rule = await this.step('create the dispatch rule', () =>
        this.client.createSipDispatchRule(
          { type: 'individual', roomPrefix: 'call-' },
          { name: `${spec.name} dispatch`, trunkIds: [trunk.sipTrunkId] },
        ),
      );
      return { trunkId: trunk.sipTrunkId, dispatchRuleId: rule.sipDispatchRuleId };
    } catch (error) {
      // The step failed: take back the trunk it created, so the caller has nothing to clean up.
      await this.client.deleteSipTrunk(trunk.sipTrunkId).catch(() => undefined);
      throw error;
    }
  }

  createOutboundTrunk(spec: OutboundTrunkSpec): Promise<string> {
    return this.step('create the outbound trunk', async () => {
      const trunk = await this.client.createSipOutboundTrunk(spec.name, spec.address, spec.numbers, {
        transport: TRANSPORT_AUTO,
        authUsername: spec.credentials.username,
        authPassword: spec.credentials.password,
        ...(spec.destinationCountry ? { destinationCountry: spec.destinationCountry } : {}),
        ...(spec.headers ? { headers: spec.headers } : {}),
      });
      return trunk.sipTrunkId;
    });
  }

  async deleteInboundTrunk(inbound: ProvisionedInbound): Promise<void> {
    await this.step('delete the dispatch rule', () => this.client.deleteSipDispatchRule(inbound.dispatchRuleId));
    await this.step('delete the inbound trunk', () => this.client.deleteSipTrunk(inbound.trunkId));
  }

  async deleteOutboundTrunk(trunkId: string): Promise<void> {
    await this.step('delete the outbound trunk', () => this.client.deleteSipTrunk(trunkId));
  }

  private async step<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new SipProvisioningError(`LiveKit could not ${what}: ${(error as Error).message}`, { cause: error });
    }
  }
}
