import { randomBytes } from 'node:crypto';
import {
  type InboundTrunkSpec,
  type OutboundTrunkSpec,
  type ProviderInventory,
  type ProvisionedInbound,
  releasedNumber,
  SipNumberTakenError,
  type SipProvisioner,
  SipProvisioningError,
} from './sip-provisioner';

export type LocalOperation =
  | 'createInbound'
  | 'createOutbound'
  | 'deleteInbound'
  | 'deleteOutbound'
  | 'releaseInbound'
  | 'restoreInbound'
  | 'updateDispatch';

export interface LocalTrunk {
  id: string;
  direction: 'inbound' | 'outbound';
  spec: InboundTrunkSpec | OutboundTrunkSpec;
  dispatchRuleId?: string;
}

const providerId = (prefix: string) => `${prefix}_${randomBytes(9).toString('base64url')}`;

/**
 * A provider for development and tests: issues LiveKit-style ids (`ST_...`, `SDR_...`) and keeps the trunks that
 * exist in memory, so tests can see every create and delete. It refuses what LiveKit refuses of the calls this
 * service makes: a second inbound trunk carrying a number another inbound trunk carries (protocol sip/sip.go
 * `ValidateTrunksIter`). `failNext` makes the next call of an operation fail, to prove that a provider failure at
 * any step leaves nothing behind.
 */
export class LocalSipProvisioner implements SipProvisioner {
  readonly trunks = new Map<string, LocalTrunk>();
  readonly log: { operation: LocalOperation; id: string }[] = [];
  private readonly failures = new Map<LocalOperation, number>();
  private readonly delays = new Map<LocalOperation, number>();

  failNext(operation: LocalOperation, times = 1): void {
    this.failures.set(operation, (this.failures.get(operation) ?? 0) + times);
  }

  /** Makes the next call of an operation take this long, as a slow provider would. */
  delayNext(operation: LocalOperation, milliseconds: number): void {
    this.delays.set(operation, milliseconds);
  }

  /** The trunks that exist, by direction, for tests to compare with what the service believes. */
  existing(direction: 'inbound' | 'outbound'): string[] {
    return [...this.trunks.values()].filter((trunk) => trunk.direction === direction).map((trunk) => trunk.id);
  }

  async createInboundTrunk(spec: InboundTrunkSpec): Promise<ProvisionedInbound> {
    await this.maybeFail('createInbound');
    this.refuseConflicts(spec.numbers, undefined);
    const inbound = { trunkId: providerId('ST'), dispatchRuleId: providerId('SDR') };
    this.trunks.set(inbound.trunkId, {
      id: inbound.trunkId,
      direction: 'inbound',
      spec,
      dispatchRuleId: inbound.dispatchRuleId,
    });
    this.log.push({ operation: 'createInbound', id: inbound.trunkId });
    return inbound;
  }

  async createOutboundTrunk(spec: OutboundTrunkSpec): Promise<string> {
    await this.maybeFail('createOutbound');
    const id = providerId('ST');
    this.trunks.set(id, { id, direction: 'outbound', spec });
    this.log.push({ operation: 'createOutbound', id });
    return id;
  }

  async deleteInboundTrunk(inbound: ProvisionedInbound): Promise<void> {
    await this.maybeFail('deleteInbound');
    this.trunks.delete(inbound.trunkId);
    this.log.push({ operation: 'deleteInbound', id: inbound.trunkId });
  }

  async deleteOutboundTrunk(trunkId: string): Promise<void> {
    await this.maybeFail('deleteOutbound');
    this.trunks.delete(trunkId);
    this.log.push({ operation: 'deleteOutbound', id: trunkId });
  }

  async deleteDispatchRule(dispatchRuleId: string): Promise<void> {
    await this.maybeFail('deleteInbound');
    for (const trunk of this.trunks.values()) {
      if (trunk.dispatchRuleId === dispatchRuleId) trunk.dispatchRuleId = undefined;
    }
  }

  async updateInboundDispatch(
    inbound: ProvisionedInbound,
    spec: Pick<InboundTrunkSpec, 'name' | 'owner' | 'dispatch'>,
  ): Promise<void> {
    await this.maybeFail('updateDispatch');
    const trunk = this.trunks.get(inbound.trunkId);
    if (!trunk || trunk.dispatchRuleId !== inbound.dispatchRuleId) {
      throw new SipProvisioningError('requested sip dispatch rule does not exist');
    }
    trunk.spec = { ...trunk.spec, dispatch: spec.dispatch } as InboundTrunkSpec;
  }

  async releaseInboundNumbers(trunkId: string): Promise<void> {
    await this.maybeFail('releaseInbound');
    this.setNumbers(trunkId, [releasedNumber(trunkId)]);
    this.log.push({ operation: 'releaseInbound', id: trunkId });
  }

  async restoreInboundNumbers(trunkId: string, numbers: string[]): Promise<void> {
    await this.maybeFail('restoreInbound');
    this.setNumbers(trunkId, numbers);
    this.log.push({ operation: 'restoreInbound', id: trunkId });
  }

  async inventory(): Promise<ProviderInventory> {
    const all = [...this.trunks.values()];
    return {
      inbound: all
        .filter((trunk) => trunk.direction === 'inbound')
        .map((trunk) => ({ trunkId: trunk.id, numbers: trunk.spec.numbers, owner: trunk.spec.owner })),
      outbound: all
        .filter((trunk) => trunk.direction === 'outbound')
        .map((trunk) => ({ trunkId: trunk.id, owner: trunk.spec.owner })),
      dispatchRules: all
        .filter((trunk) => trunk.dispatchRuleId)
        .map((trunk) => ({ dispatchRuleId: trunk.dispatchRuleId!, trunkIds: [trunk.id], owner: trunk.spec.owner })),
    };
  }

  private setNumbers(trunkId: string, numbers: string[]): void {
    const trunk = this.trunks.get(trunkId);
    if (!trunk || trunk.direction !== 'inbound') {
      throw new SipProvisioningError('requested sip trunk does not exist');
    }
    this.refuseConflicts(numbers, trunkId);
    trunk.spec = { ...trunk.spec, numbers };
  }

  /** LiveKit's rule: a number is carried by one inbound trunk (none of ours sets AllowedNumbers). */
  private refuseConflicts(numbers: string[], except: string | undefined): void {
    const holder = [...this.trunks.values()].find(
      (trunk) =>
        trunk.direction === 'inbound' && trunk.id !== except && trunk.spec.numbers.some((n) => numbers.includes(n)),
    );
    if (holder) {
      throw new SipNumberTakenError(
        `Conflicting inbound SIP Trunks: "${except ?? '<new>'}" and "${holder.id}", using the same number(s) ${JSON.stringify(numbers)} without AllowedNumbers set`,
      );
    }
  }

  private async maybeFail(operation: LocalOperation): Promise<void> {
    const delay = this.delays.get(operation);
    if (delay !== undefined) {
      this.delays.delete(operation);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    const left = this.failures.get(operation) ?? 0;
    if (left <= 0) return;
    this.failures.set(operation, left - 1);
    throw new SipProvisioningError(`Simulated provider failure on ${operation}`);
  }
}
