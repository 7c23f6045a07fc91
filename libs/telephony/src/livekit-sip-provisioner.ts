import {
  RoomAgentDispatch,
  RoomConfiguration,
  SIPDispatchRule,
  SIPDispatchRuleIndividual,
  SIPDispatchRuleInfo,
  SipClient,
} from 'livekit-server-sdk';
import {
  type InboundTrunkSpec,
  type OutboundTrunkSpec,
  ownerMetadata,
  ownerOf,
  type ProviderInventory,
  type ProvisionedInbound,
  releasedNumber,
  SipNumberTakenError,
  type SipProvisioner,
  SipProvisioningError,
} from './sip-provisioner';

export interface LiveKitSettings {
  url: string;
  apiKey: string;
  apiSecret: string;
  /** How long one provider call may take before the step fails (default 10 s). */
  requestTimeoutSeconds?: number;
}

/** LiveKit's SIPTransport.SIP_TRANSPORT_AUTO. */
const TRANSPORT_AUTO = 0;
const REQUEST_TIMEOUT_SECONDS = 10;

/**
 * Each inbound call gets a room of its own, which LiveKit names (livekit/protocol sip/sip.go `EvaluateDispatchRule`,
 * its `DispatchRuleIndividual` case) `<roomPrefix>_<caller>_<random>`: `call-_+14155550123_Ab3dEf5hJk7m`, the caller
 * being the user part of the call's From URI as the carrier sent it, the random part 12 base57 characters.
 */
const ROOM_PREFIX = 'call-';

/**
 * The external id of an inbound call (the id its session is opened under) is the name of its room: a dispatch rule
 * serves every call to its trunk, so it cannot carry one call's id, while the room LiveKit makes for a call is that
 * call's alone. The rule's metadata says so with `"external_id": "{room}"`, a placeholder for the room's name that is
 * no valid external id itself, so an agent that does not replace it is refused rather than filing every inbound call
 * under one id. (An outbound call's metadata carries its external id as it is, which is its room's name too.)
 */
export const INBOUND_EXTERNAL_ID = '{room}';

/**
 * What a dispatch rule says about the calls it routes: the agent to dispatch into each room, with the assistant, the
 * number and where the call's external id is as its job's metadata (naming an agent turns LiveKit's automatic
 * dispatch off, so the rule must name it), and the rule's own metadata, which LiveKit gives the caller's participant
 * (sip/sip.go `EvaluateDispatchRule`: `ParticipantMetadata: rule.GetMetadata()`): the same, and the owner tag.
 */
function dispatchFields(spec: Pick<InboundTrunkSpec, 'name' | 'owner' | 'dispatch'>) {
  const told = { ...spec.dispatch.metadata, external_id: INBOUND_EXTERNAL_ID };
  return {
    name: `${spec.name} dispatch`,
    metadata: ownerMetadata(spec.owner, told),
    roomConfig: new RoomConfiguration({
      agents: [
        new RoomAgentDispatch({
          agentName: spec.dispatch.agentName,
          metadata: JSON.stringify(told),
        }),
      ],
    }),
  };
}

/** A Twirp error's code, as the SDK surfaces it (`not_found`, `invalid_argument`, ...). */
const codeOf = (error: unknown) => (error as { code?: string }).code;

/**
 * SIP trunks at LiveKit through its Twirp API (`livekit-server-sdk`'s SipClient): an inbound trunk with its
 * numbers and either allowed addresses or digest credentials, plus a dispatch rule scoped to it that puts each
 * call in a room of its own and dispatches the named agent there; an outbound trunk with the carrier's address,
 * numbers, credentials and destination country. Every object carries this deployment's owner tag in its metadata.
 *
 * A step whose answer never came (a timeout, a lost reply) may still have happened at LiveKit, so a failed create
 * looks for what it may have made, by the owner tag it sent, and deletes it; what it cannot delete stays tagged for
 * the reconcile.
 */
export class LiveKitSipProvisioner implements SipProvisioner {
  private readonly client: SipClient;

  constructor(settings: LiveKitSettings) {
    this.client = new SipClient(settings.url, settings.apiKey, settings.apiSecret, {
      requestTimeout: settings.requestTimeoutSeconds ?? REQUEST_TIMEOUT_SECONDS,
    });
  }

  async createInboundTrunk(spec: InboundTrunkSpec): Promise<ProvisionedInbound> {
    const metadata = ownerMetadata(spec.owner);
    const trunk = await this.step(
      'create the inbound trunk',
      () =>
        this.client.createSipInboundTrunk(spec.name, spec.numbers, {
          metadata,
          ...(spec.allowedAddresses ? { allowedAddresses: spec.allowedAddresses } : {}),
          ...(spec.credentials
            ? { authUsername: spec.credentials.username, authPassword: spec.credentials.password }
            : {}),
        }),
      () => this.deleteTagged(this.client.listSipInboundTrunk({ numbers: spec.numbers }), metadata),
    );
    const rule = await this.step(
      'create the dispatch rule',
      () =>
        this.client.createSipDispatchRule(
          { type: 'individual', roomPrefix: ROOM_PREFIX },
          { trunkIds: [trunk.sipTrunkId], ...dispatchFields(spec) },
        ),
      // Take back the trunk this step created (and a rule whose answer was lost), so the caller has nothing to undo.
      async () => {
        for (const item of await this.client.listSipDispatchRule({ trunkIds: [trunk.sipTrunkId] })) {
          if (item.trunkIds.includes(trunk.sipTrunkId)) await this.deleteRule(item.sipDispatchRuleId);
        }
        await this.client.deleteSipTrunk(trunk.sipTrunkId);
      },
      true,
    );
    return { trunkId: trunk.sipTrunkId, dispatchRuleId: rule.sipDispatchRuleId };
  }

  async createOutboundTrunk(spec: OutboundTrunkSpec): Promise<string> {
    const metadata = ownerMetadata(spec.owner);
    const trunk = await this.step(
      'create the outbound trunk',
      () =>
        this.client.createSipOutboundTrunk(spec.name, spec.address, spec.numbers, {
          metadata,
          transport: TRANSPORT_AUTO,
          authUsername: spec.credentials.username,
          authPassword: spec.credentials.password,
          ...(spec.destinationCountry ? { destinationCountry: spec.destinationCountry } : {}),
          ...(spec.headers ? { headers: spec.headers } : {}),
        }),
      () => this.deleteTagged(this.client.listSipOutboundTrunk({ numbers: spec.numbers }), metadata),
    );
    return trunk.sipTrunkId;
  }

  async updateInboundDispatch(
    inbound: ProvisionedInbound,
    spec: Pick<InboundTrunkSpec, 'name' | 'owner' | 'dispatch'>,
  ): Promise<void> {
    await this.step('update the dispatch rule', () =>
      this.client.updateSipDispatchRule(
        inbound.dispatchRuleId,
        new SIPDispatchRuleInfo({
          rule: new SIPDispatchRule({
            rule: { case: 'dispatchRuleIndividual', value: new SIPDispatchRuleIndividual({ roomPrefix: ROOM_PREFIX }) },
          }),
          trunkIds: [inbound.trunkId],
          ...dispatchFields(spec),
        }),
      ),
    );
  }

  async releaseInboundNumbers(trunkId: string): Promise<void> {
    await this.setNumbers('release the number from the inbound trunk', trunkId, [releasedNumber(trunkId)]);
  }

  async restoreInboundNumbers(trunkId: string, numbers: string[]): Promise<void> {
    await this.setNumbers('restore the number to the inbound trunk', trunkId, numbers);
  }

  async deleteInboundTrunk(inbound: ProvisionedInbound): Promise<void> {
    if (inbound.dispatchRuleId) {
      await this.step('delete the dispatch rule', () => this.deleteRule(inbound.dispatchRuleId));
    }
    // DeleteSIPTrunk succeeds for a trunk that is already gone (livekit/livekit pkg/service/redisstore_sip.go).
    await this.step('delete the inbound trunk', () => this.client.deleteSipTrunk(inbound.trunkId));
  }

  async deleteOutboundTrunk(trunkId: string): Promise<void> {
    await this.step('delete the outbound trunk', () => this.client.deleteSipTrunk(trunkId));
  }

  async deleteDispatchRule(dispatchRuleId: string): Promise<void> {
    await this.step('delete the dispatch rule', () => this.deleteRule(dispatchRuleId));
  }

  async inventory(): Promise<ProviderInventory> {
    const [inbound, outbound, rules] = await this.step('list the SIP trunks and dispatch rules', () =>
      Promise.all([
        this.client.listSipInboundTrunk(),
        this.client.listSipOutboundTrunk(),
        this.client.listSipDispatchRule(),
      ]),
    );
    return {
      inbound: inbound.map((item) => ({
        trunkId: item.sipTrunkId,
        numbers: item.numbers,
        owner: ownerOf(item.metadata),
      })),
      outbound: outbound.map((item) => ({ trunkId: item.sipTrunkId, owner: ownerOf(item.metadata) })),
      dispatchRules: rules.map((item) => ({
        dispatchRuleId: item.sipDispatchRuleId,
        trunkIds: item.trunkIds,
        owner: ownerOf(item.metadata),
      })),
    };
  }

  private setNumbers(what: string, trunkId: string, numbers: string[]) {
    return this.step(what, () =>
      this.client.updateSipInboundTrunkFields(trunkId, {
        numbers: { set: numbers } as never, // a ListUpdate, built by the SDK's request message
      }),
    );
  }

  /** Deletes the listed trunks carrying exactly this metadata: what a create whose answer was lost made. */
  private async deleteTagged(listed: Promise<{ sipTrunkId: string; metadata: string }[]>, metadata: string) {
    for (const item of await listed) {
      if (item.metadata === metadata) await this.client.deleteSipTrunk(item.sipTrunkId);
    }
  }

  /** DeleteSIPDispatchRule answers NotFound for a rule that is gone (pkg/service/sip.go): that is done too. */
  private async deleteRule(dispatchRuleId: string): Promise<void> {
    try {
      await this.client.deleteSipDispatchRule(dispatchRuleId);
    } catch (error) {
      if (codeOf(error) !== 'not_found') throw error;
    }
  }

  /**
   * One provider call; on failure, `undo` (when given) takes back what the call may have done despite failing,
   * best effort: anything it misses carries the owner tag, and the reconcile removes it. A refusal (a 4xx answer)
   * did nothing, so only the work of earlier calls is undone then (`undoRefused`).
   */
  private async step<T>(
    what: string,
    work: () => Promise<T>,
    undo?: () => Promise<void>,
    undoRefused = false,
  ): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const status = (error as { status?: number }).status;
      const refused = status !== undefined && status < 500;
      if (undo && (undoRefused || !refused)) await undo().catch(() => undefined);
      const message = `LiveKit could not ${what}: ${(error as Error).message}`;
      // protocol sip/sip.go `validateTrunkInbound`: another inbound trunk carries the number.
      if (
        codeOf(error) === 'invalid_argument' &&
        (error as Error).message.startsWith('Conflicting inbound SIP Trunks')
      ) {
        throw new SipNumberTakenError(message, { cause: error });
      }
      throw new SipProvisioningError(message, { cause: error });
    }
  }
}
