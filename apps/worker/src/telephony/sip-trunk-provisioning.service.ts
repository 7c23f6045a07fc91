import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { SecretBox, SecretContexts } from '@app/crypto';
import {
  PHONE_NUMBER_TAKEN,
  PhoneNumber,
  type ProviderTrunks,
  type ProvisioningRequestRow,
  SipTrunk,
  SipTrunksRepository,
  Transactions,
  type TrunkChanges,
} from '@app/database';
import {
  type FailureReason,
  FailureReasons,
  HandlesJob,
  type InboundDispatchJob,
  JobQueue,
  type JobFailed,
  jobFailed,
  Jobs,
  type SipProvisioningJob,
} from '@app/jobs';
import {
  InboundTrunkSpec,
  OutboundTrunkSpec,
  ProvisionedInbound,
  SIP_PROVISIONER,
  SipNumberTakenError,
  SipProvisioner,
  SipProvisioningError,
  TrunkOwner,
} from '@app/telephony';
import { errorMessage } from '@app/platform';

/** The trunk as it should be once the request is applied. */
interface TrunkState {
  phoneNumber: string;
  countryCode: string | null;
  username: string;
  password: string;
  address: string;
  authorization: 'auth' | 'ip';
  allowedIps: string[] | null;
  outboundProxy: boolean;
}

/** What a request changed at the provider so far, to keep or to take back. */
interface Made extends ProviderTrunks {
  inbound?: ProvisionedInbound;
  /** The old inbound trunk that gave up its number for the new one (it keeps its id and settings). */
  released?: { trunkId: string; number: string };
}

/**
 * Carries out SIP trunk requests against the provider. Outbound trunks are never checked against each other, so
 * they are made before the old ones break. An inbound trunk is different: the provider lets one inbound trunk
 * carry a number, so a new inbound trunk for the same number is created only after the old one released it
 * (the only order LiveKit accepts; the number reaches no trunk for one provider round trip). The outbound trunk
 * goes first, the swap of the inbound trunk last, so the window opens only when everything else succeeded.
 *
 * The row points at the new trunks in the same transaction that settles the request, and only then are the old
 * ones deleted (a delete that fails is recorded and retried by the clean-up job, never forgotten). A failure at any
 * step removes what this request created, gives the number back to the old inbound trunk, and leaves the row as it
 * was. The trunk row stays locked throughout, so two requests for one trunk run one after the other, each against
 * the state the previous one left.
 */
@Injectable()
export class SipTrunkProvisioning {
  private readonly logger = new Logger(SipTrunkProvisioning.name);
  private deployment?: string;

  constructor(
    private readonly trunks: SipTrunksRepository,
    private readonly transactions: Transactions,
    @Inject(SIP_PROVISIONER) private readonly provider: SipProvisioner,
    private readonly secrets: SecretBox,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  @HandlesJob(Jobs.provisionSipTrunk)
  async process({ requestId }: SipProvisioningJob): Promise<{ status: string } | JobFailed> {
    const replaced: Made = {};
    const outcome = await this.transactions.run(async (transaction) => {
      const trunks = this.trunks.within(transaction);
      const request = await trunks.request(requestId);
      if (!request || request.status !== 'pending' || request.phone_number_id === null) return 'skipped';
      const { trunk, number } = await trunks.lockTrunk(request.phone_number_id);
      if (!trunk || !number)
        return this.settle(trunks, request, 'The SIP trunk no longer exists.', FailureReasons.trunkGone);

      const current = this.stateOf(number, trunk);
      const wanted = this.apply(current, request.changes, trunk.id);
      const first = request.kind === 'create';
      // A number taken by another trunk since the API checked: refuse before the provider sees it.
      if (
        wanted.phoneNumber !== current.phoneNumber &&
        (await trunks.numberHeldByAnother(wanted.phoneNumber, number.id, number.userId))
      )
        return this.settle(trunks, request, PHONE_NUMBER_TAKEN, FailureReasons.numberHeldByAnotherTrunk);
      const recreateInbound =
        first ||
        wanted.phoneNumber !== current.phoneNumber ||
        wanted.username !== current.username ||
        wanted.password !== current.password ||
        wanted.authorization !== current.authorization ||
        JSON.stringify(wanted.allowedIps) !== JSON.stringify(current.allowedIps);
      const recreateOutbound =
        first ||
        wanted.phoneNumber !== current.phoneNumber ||
        wanted.username !== current.username ||
        wanted.password !== current.password ||
        wanted.address !== current.address ||
        wanted.outboundProxy !== current.outboundProxy;

      const created: Made = {};
      const owner = await this.ownerFor(trunk.id);
      try {
        if (recreateOutbound)
          created.outbound = await this.provider.createOutboundTrunk(this.outboundSpec(owner, wanted));
        if (recreateInbound) {
          const spec = await this.inboundSpec(trunks, owner, number, wanted);
          if (trunk.inboundTrunkId && wanted.phoneNumber === current.phoneNumber) {
            // Recorded before the call: a release whose answer is lost may still have happened.
            created.released = { trunkId: trunk.inboundTrunkId, number: current.phoneNumber };
            await this.provider.releaseInboundNumbers(trunk.inboundTrunkId);
          }
          created.inbound = await this.provider.createInboundTrunk(spec);
        }
      } catch (error) {
        await this.discard(trunks, created);
        this.logger.warn({ requestId, trunkId: trunk.id, error: errorMessage(error) }, 'SIP provisioning failed');
        // The provider's own refusal of a number some inbound trunk carries is the caller's 422, not a 502.
        const [message, reason] =
          error instanceof SipNumberTakenError
            ? [PHONE_NUMBER_TAKEN, FailureReasons.numberTakenAtProvider]
            : [
                errorMessage(error),
                error instanceof SipProvisioningError
                  ? FailureReasons.providerRefused
                  : FailureReasons.unexpected(error),
              ];
        return this.settle(trunks, request, message, reason, first ? number.id : undefined);
      }

      // Settle first: if the API gave up waiting meanwhile, this request must leave nothing behind.
      if (!(await trunks.settleDone(request.id))) {
        await this.discard(trunks, created);
        return 'abandoned';
      }
      if (created.inbound && trunk.inboundTrunkId && trunk.inboundDispatchRuleId) {
        replaced.inbound = { trunkId: trunk.inboundTrunkId, dispatchRuleId: trunk.inboundDispatchRuleId };
      }
      if (created.outbound && trunk.outboundTrunkId) replaced.outbound = trunk.outboundTrunkId;
      await trunks.recordCleanups(replaced);
      await trunks.saveProvisioned(
        number.id,
        {
          phoneNumber: wanted.phoneNumber,
          countryCode: wanted.countryCode,
          region: wanted.address,
          status: 'active',
          ...(request.changes.nickname !== undefined ? { nickname: request.changes.nickname } : {}),
        },
        {
          sipUsername: wanted.username,
          ...(request.changes.sip_password_sealed ? { sipPasswordSealed: request.changes.sip_password_sealed } : {}),
          sipAddress: wanted.address,
          sipCallingFormat: request.changes.sip_calling_format ?? trunk.sipCallingFormat,
          inboundAuthorizationType: wanted.authorization,
          allowedInboundIps: wanted.allowedIps,
          outboundProxy: wanted.outboundProxy,
          ...(created.inbound
            ? { inboundTrunkId: created.inbound.trunkId, inboundDispatchRuleId: created.inbound.dispatchRuleId }
            : {}),
          ...(created.outbound ? { outboundTrunkId: created.outbound } : {}),
          updatedAt: new Date(),
        },
      );
      return 'done';
    });
    // Break after make: the old trunks go only now that nothing points at them.
    if (replaced.inbound || replaced.outbound)
      await this.jobs.enqueue(Jobs.cleanUpProviderTrunks, {}).catch(() => undefined);
    return typeof outcome === 'string' ? { status: outcome } : outcome;
  }

  /** Deletes recorded provider trunks; each one that still fails stays recorded for the next run. */
  @HandlesJob(Jobs.cleanUpProviderTrunks)
  async cleanUp(): Promise<{ deleted: number; remaining: number }> {
    let deleted = 0;
    let remaining = 0;
    await this.transactions.run(async (transaction) => {
      const trunks = this.trunks.within(transaction);
      for (const row of await trunks.lockDueCleanups(100)) {
        try {
          if (row.kind === 'inbound') {
            await this.provider.deleteInboundTrunk({
              trunkId: row.trunk_id,
              dispatchRuleId: row.dispatch_rule_id ?? '',
            });
          } else {
            await this.provider.deleteOutboundTrunk(row.trunk_id);
          }
          await trunks.cleanedUp(row.id);
          deleted++;
        } catch (error) {
          await trunks.cleanupFailed(row.id, errorMessage(error));
          remaining++;
        }
      }
    });
    if (remaining > 0) this.logger.warn({ deleted, remaining }, 'some provider trunks could not be deleted yet');
    return { deleted, remaining };
  }

  private stateOf(number: PhoneNumber, trunk: SipTrunk): TrunkState {
    return {
      phoneNumber: number.phoneNumber,
      countryCode: number.countryCode,
      username: trunk.sipUsername,
      password: this.secrets.open(trunk.sipPasswordSealed, SecretContexts.sipPassword(trunk.id)),
      address: trunk.sipAddress,
      authorization: trunk.inboundAuthorizationType,
      allowedIps: trunk.inboundAuthorizationType === 'ip' ? trunk.allowedInboundIps : null,
      outboundProxy: trunk.outboundProxy,
    };
  }

  private apply(current: TrunkState, changes: TrunkChanges, trunkId: number): TrunkState {
    const authorization = changes.inbound_authorization_type ?? current.authorization;
    return {
      phoneNumber: changes.phone_number ?? current.phoneNumber,
      countryCode: changes.country_code ?? current.countryCode,
      username: changes.sip_username ?? current.username,
      password: changes.sip_password_sealed
        ? this.secrets.open(changes.sip_password_sealed, SecretContexts.sipPassword(trunkId))
        : current.password,
      address: changes.sip_address ?? current.address,
      authorization,
      // Switching to `auth` clears the list; with `ip` a list sent replaces the old one.
      allowedIps: authorization === 'ip' ? (changes.allowed_inbound_ips ?? current.allowedIps) : null,
      outboundProxy: changes.outbound_proxy ?? current.outboundProxy,
    };
  }

  /**
   * Tells the trunk's dispatch rule which assistant answers the number now. Under the trunk's row lock, so it never
   * races a re-provisioning; a trunk without provisioned inbound side has nothing to tell.
   */
  @HandlesJob(Jobs.refreshInboundDispatch)
  async refreshDispatch({ phoneNumberId }: InboundDispatchJob): Promise<{ status: string }> {
    return this.transactions.run(async (transaction) => {
      const trunks = this.trunks.within(transaction);
      const { trunk, number } = await trunks.lockTrunk(phoneNumberId);
      if (!trunk?.inboundTrunkId || !trunk.inboundDispatchRuleId || !number) return { status: 'skipped' };
      const spec = await this.dispatchSpec(trunks, await this.ownerFor(trunk.id), number);
      await this.provider.updateInboundDispatch(
        { trunkId: trunk.inboundTrunkId, dispatchRuleId: trunk.inboundDispatchRuleId },
        spec,
      );
      return { status: 'done' };
    });
  }

  /** The owner tag of what is made now for a trunk (the deployment id is read once, it never changes). */
  private async ownerFor(trunkId: number): Promise<TrunkOwner> {
    this.deployment ??= await this.trunks.deploymentId();
    return { deployment: this.deployment, trunk: trunkId, createdAt: Date.now() };
  }

  /** Who answers the number's calls: the agent, told the number and the assistant that answers it. */
  private async dispatchSpec(
    trunks: SipTrunksRepository,
    owner: TrunkOwner,
    number: { id: number; phoneNumber: string },
  ) {
    const assistant = await trunks.answeringAssistant(number.id);
    return {
      name: `trunk-${owner.trunk}-inbound`,
      owner,
      dispatch: {
        agentName: this.config.livekitAgentName,
        metadata: { assistant_id: assistant, phone_number_id: number.id, phone_number: number.phoneNumber },
      },
    };
  }

  private async inboundSpec(
    trunks: SipTrunksRepository,
    owner: TrunkOwner,
    number: PhoneNumber,
    state: TrunkState,
  ): Promise<InboundTrunkSpec> {
    return {
      ...(await this.dispatchSpec(trunks, owner, { id: number.id, phoneNumber: state.phoneNumber })),
      numbers: [state.phoneNumber],
      ...(state.authorization === 'ip'
        ? { allowedAddresses: state.allowedIps ?? [] }
        : { credentials: { username: state.username, password: state.password } }),
    };
  }

  private outboundSpec(owner: TrunkOwner, state: TrunkState): OutboundTrunkSpec {
    const proxy = state.outboundProxy ? this.config.sipOutboundProxyAddress : undefined;
    return {
      name: `trunk-${owner.trunk}-outbound`,
      owner,
      // Through the fixed-egress proxy, which forwards to the carrier named in X-Destination-Host.
      address: proxy ?? state.address,
      numbers: [state.phoneNumber],
      credentials: { username: state.username, password: state.password },
      ...(state.countryCode ? { destinationCountry: state.countryCode } : {}),
      ...(proxy ? { headers: { 'X-Destination-Host': state.address } } : {}),
    };
  }

  /**
   * Takes back what a failed or abandoned request did: the new inbound trunk goes first, freeing the number for the
   * old trunk, which gets it back. Whatever cannot be deleted now is recorded for the clean-up job; a number that
   * cannot be given back now is given back by the reconcile, which finds the stored trunk without it.
   */
  private async discard(trunks: SipTrunksRepository, created: Made) {
    const leftovers: Made = {};
    if (created.inbound) {
      await this.provider.deleteInboundTrunk(created.inbound).catch(() => (leftovers.inbound = created.inbound));
    }
    if (created.released && !leftovers.inbound) {
      const { trunkId, number } = created.released;
      await this.provider
        .restoreInboundNumbers(trunkId, [number])
        .catch((error: Error) =>
          this.logger.error(
            { trunkId, error: error.message },
            'the number could not be given back to its inbound trunk yet',
          ),
        );
    }
    if (created.outbound) {
      await this.provider.deleteOutboundTrunk(created.outbound).catch(() => (leftovers.outbound = created.outbound));
    }
    await trunks.recordCleanups(leftovers);
  }

  /** Fails the request with the error its caller reads; the job ends failed with the reason's class. */
  private async settle(
    trunks: SipTrunksRepository,
    request: ProvisioningRequestRow,
    error: string,
    reason: FailureReason,
    pendingNumberId?: number,
  ): Promise<JobFailed> {
    await trunks.settleFailed(request.id, error);
    // A trunk that never came to be is removed with its number.
    if (pendingNumberId !== undefined) await trunks.removeUnprovisioned(pendingNumberId);
    return jobFailed(reason);
  }
}
