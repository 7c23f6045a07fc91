import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { SipTrunksRepository, Transactions } from '@app/database';
import { HandlesJob, Jobs } from '@app/jobs';
import { errorMessage, MetricsRegistry } from '@app/platform';
import { SIP_PROVISIONER, SipProvisioner, TrunkOwner } from '@app/telephony';

type Kind = 'inbound' | 'outbound' | 'dispatch_rule';

export type ReconcileOutcome = {
  /** Objects this deployment made that no row names, removed now. */
  removed: number;
  /** Orphans found but not removed (the provider refused or failed): reported, tried again next run. */
  remaining: number;
  /** Stored trunks whose inbound trunk had lost its number, given it back. */
  restored: number;
};

/**
 * Converges the provider on the database. What this deployment made (its owner tag names this database's
 * deployment id) and no row, pending request or recorded clean-up names is an orphan once it is older than the
 * grace period, and goes; objects without the tag, or with another deployment's, are never touched. A stored trunk
 * whose inbound trunk no longer carries its number (a rollback that could not give it back) gets it back.
 */
@Injectable()
export class ProviderReconcile {
  private readonly logger = new Logger(ProviderReconcile.name);
  private readonly removedTotal: Counter<'kind'>;
  private readonly orphans: Gauge<'kind'>;
  private readonly restoredTotal: Counter;

  constructor(
    private readonly trunks: SipTrunksRepository,
    private readonly transactions: Transactions,
    @Inject(SIP_PROVISIONER) private readonly provider: SipProvisioner,
    private readonly config: AppConfig,
    registry: MetricsRegistry,
  ) {
    this.removedTotal = new Counter({
      name: 'sip_provider_orphans_removed_total',
      help: 'Provider objects this deployment made that no SIP trunk named any more, removed by the reconcile',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.orphans = new Gauge({
      name: 'sip_provider_orphans',
      help: 'Orphans the last reconcile found and could not remove yet, by kind',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.restoredTotal = new Counter({
      name: 'sip_provider_numbers_restored_total',
      help: 'Inbound trunks that had lost their number and were given it back by the reconcile',
      registers: [registry],
    });
  }

  @HandlesJob(Jobs.reconcileProviderTrunks)
  async reconcile(): Promise<ReconcileOutcome> {
    const deployment = await this.trunks.deploymentId();
    const held = await this.provider.inventory();
    const known = await this.knownIds();
    const cutoff = Date.now() - this.config.sipReconcileGraceSeconds * 1000;
    const orphan = (id: string, owner: TrunkOwner | null) =>
      owner !== null && owner.deployment === deployment && owner.createdAt < cutoff && !known.has(id);

    const outcome: ReconcileOutcome = { removed: 0, remaining: 0, restored: 0 };
    const remaining: Record<Kind, number> = { inbound: 0, outbound: 0, dispatch_rule: 0 };
    const remove = async (kind: Kind, id: string, work: () => Promise<void>) => {
      try {
        await work();
        this.removedTotal.inc({ kind });
        outcome.removed++;
        this.logger.warn({ kind, id }, 'removed an orphan at the telephony provider');
      } catch (error) {
        remaining[kind]++;
        this.logger.error({ kind, id, error: errorMessage(error) }, 'an orphan at the provider could not be removed');
      }
    };

    for (const trunk of held.inbound.filter((item) => orphan(item.trunkId, item.owner))) {
      await remove('inbound', trunk.trunkId, () =>
        this.provider.deleteInboundTrunk({ trunkId: trunk.trunkId, dispatchRuleId: '' }),
      );
    }
    for (const trunk of held.outbound.filter((item) => orphan(item.trunkId, item.owner))) {
      await remove('outbound', trunk.trunkId, () => this.provider.deleteOutboundTrunk(trunk.trunkId));
    }
    // Rules go on their own: deleting a trunk leaves the rules naming it (pkg/service/redisstore_sip.go).
    for (const rule of held.dispatchRules.filter((item) => orphan(item.dispatchRuleId, item.owner))) {
      await remove('dispatch_rule', rule.dispatchRuleId, () => this.provider.deleteDispatchRule(rule.dispatchRuleId));
    }
    for (const kind of Object.keys(remaining) as Kind[]) this.orphans.set({ kind }, remaining[kind]);
    outcome.remaining = Object.values(remaining).reduce((sum, count) => sum + count, 0);

    outcome.restored = await this.restoreNumbers(held.inbound);
    if (outcome.removed + outcome.remaining + outcome.restored > 0) {
      this.logger.warn(outcome, 'reconciled the telephony provider with the database');
    }
    return outcome;
  }

  /** Every provider id a row, a pending clean-up or a pending request still needs. */
  private async knownIds(): Promise<Set<string>> {
    return this.trunks.knownProviderIds();
  }

  /**
   * Gives each stored trunk's number back to its inbound trunk when the provider shows the trunk without it. A row
   * being provisioned right now is locked and skipped: its request is releasing the number on purpose.
   */
  private async restoreNumbers(inbound: { trunkId: string; numbers: string[] }[]): Promise<number> {
    const numbersOf = new Map(inbound.map((item) => [item.trunkId, item.numbers]));
    const stored = await this.trunks.storedInboundNumbers();
    let restored = 0;
    for (const row of stored) {
      const numbers = numbersOf.get(row.trunk_id);
      if (!numbers || numbers.includes(row.number)) continue;
      await this.transactions
        .run(async (transaction) => {
          const trunks = this.trunks.within(transaction);
          if ((await trunks.lockInboundTrunkIfFree(row.id)) !== row.trunk_id) return;
          await this.provider.restoreInboundNumbers(row.trunk_id, [row.number]);
          this.restoredTotal.inc();
          restored++;
        })
        .catch((error: Error) =>
          this.logger.error({ trunkId: row.trunk_id, error: error.message }, 'a number could not be given back yet'),
        );
    }
    return restored;
  }
}
