import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { Clock, isWithinDialWindow } from '@app/calls';
import { FINAL_LEAD_STATUSES, OPEN_CALL_STATUSES, OPEN_LEAD_STATUSES } from '@app/contracts';
import {
  type CallerNumberRow,
  type ClaimedCampaignRow,
  type ContactRow,
  DiallingRepository,
  type PlacedCall,
  Transactions,
} from '@app/database';
import { type CampaignJob, HandlesJob, JobQueue, Jobs } from '@app/jobs';
import { CallPlacer } from './call-placer.service';

/** A running campaign under its claim's lock, and how many of its calls are in flight. */
interface ClaimedCampaign extends ClaimedCampaignRow {
  in_flight: number;
}

export type ClaimOutcome =
  | { claimed: number[] }
  | {
      idle:
        | 'not-running'
        | 'outside-hours'
        | 'no-slot'
        | 'account-at-limit'
        | 'no-caller-number'
        | 'nothing-due'
        | 'completed';
    };

/**
 * Decides who a running campaign calls next. Claims happen in one transaction per campaign that holds the
 * campaign's row lock, so any number of workers can run them: the parallel limit is counted and enforced under
 * that lock, and leads are taken with SKIP LOCKED so an edit of a lead never blocks the dialer. A claim writes each
 * call as a pending dial, committed before anyone is dialled (see CallPlacer), so a worker that dies after the
 * claim loses nothing: the periodic sweep re-queues dials that nobody settled within the lease.
 */

/** Dials the periodic look settles or resumes at most, each time. */
const SWEEP_BATCH = 1000;
@Injectable()
export class DialScheduler {
  private readonly logger = new Logger(DialScheduler.name);

  constructor(
    private readonly dialling: DiallingRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly placer: CallPlacer,
  ) {}

  /**
   * Claims what the campaign may dial now and places the claimed calls at once, in this job (one queue hop less
   * between a freed slot and the next dial). A placement that fails unexpectedly leaves its dial to the sweep.
   */
  async run(campaignId: number): Promise<ClaimOutcome> {
    const outcome = await this.transactions.run((transaction) =>
      this.claim(this.dialling.within(transaction), campaignId),
    );
    if ('claimed' in outcome) {
      await Promise.all(
        outcome.claimed.map((callId) =>
          this.placer.place({ callId }).catch((error: Error) => {
            this.logger.warn({ callId, error: error.message }, 'could not place a claimed call; the sweep will');
          }),
        ),
      );
    }
    return outcome;
  }

  /** `dial-campaign`: `run` for its campaign. */
  @HandlesJob(Jobs.dialCampaign)
  dial({ campaignId }: CampaignJob): Promise<ClaimOutcome> {
    return this.run(campaignId);
  }

  /**
   * The periodic look: queues a claim for every running campaign (leads whose retry came due, a window that
   * opened) and re-queues dials that were claimed or begun but never settled within the lease (their worker died).
   */
  @HandlesJob(Jobs.dialCampaigns)
  async sweep(): Promise<{ campaigns: number; resumedDials: number; settledDials: number }> {
    const campaigns = await this.dialling.findRunningCampaignIds();
    for (const id of campaigns) await this.jobs.enqueue(Jobs.dialCampaign, { campaignId: id });
    // A dial whose worker died after the call went out: the runtime has moved the call on since, so the dial is
    // settled by what the call became. Only a call still `initiated` can be dialled again.
    const settledDials = await this.dialling.settleMovedOnDials(SWEEP_BATCH);
    // Oldest first: a dial taken again starts a new lease, so each look reaches further down any backlog.
    const unsettled = await this.dialling.findUnsettledDialIds(this.config.dialLeaseSeconds, SWEEP_BATCH);
    for (const id of unsettled) await this.jobs.enqueue(Jobs.placeCall, { callId: id });
    if (settledDials > 0) this.logger.warn({ dials: settledDials }, 'settled dials whose calls had moved on');
    if (unsettled.length > 0) this.logger.warn({ dials: unsettled.length }, 'resuming dials nobody settled');
    return { campaigns: campaigns.length, resumedDials: unsettled.length, settledDials };
  }

  private async claim(dialling: DiallingRepository, campaignId: number): Promise<ClaimOutcome> {
    const now = this.clock.now();
    const locked = await dialling.lockRunningCampaignById(campaignId, this.config.accountMaxConcurrentCalls);
    if (!locked || locked.assistant_id === null) return { idle: 'not-running' };
    const campaign: ClaimedCampaign = {
      ...locked,
      in_flight: await dialling.countCampaignCalls(locked.id, OPEN_CALL_STATUSES),
    };
    const slots = campaign.max_calls_in_parallel - campaign.in_flight;
    if (slots <= 0) return { idle: 'no-slot' };
    // The account's other calls (its other campaigns, make_call, inbound) share its limit: the leads wait, as they
    // are, until a call of the account ends, which has the campaign looked at again (the periodic look, failing that).
    if (campaign.account_slots <= 0) {
      await dialling.markCampaignsWaiting(campaign.user_id);
      return { idle: 'account-at-limit' };
    }
    if (!isWithinDialWindow(campaign, now)) return { idle: 'outside-hours' };

    const leads = await dialling.lockDueLeads(campaign.id, now, Math.min(slots, campaign.account_slots));
    if (leads.length === 0) return this.completeIfDone(dialling, campaign);

    const numbers = await this.callerNumbers(dialling, campaign);
    if (numbers.length === 0) {
      this.logger.warn({ campaignId: campaign.id }, 'campaign has leads due but no phone number to call from');
      return { idle: 'no-caller-number' };
    }
    const contacts = await this.nextContacts(
      dialling,
      leads.filter((lead) => lead.attempts >= campaign.max_retries).map((lead) => lead.id),
    );
    const placed: PlacedCall[] = [];
    const spent: number[] = [];
    for (const lead of leads) {
      const contact = lead.attempts >= campaign.max_retries ? contacts.get(lead.id) : undefined;
      if (lead.attempts >= campaign.max_retries && !contact) {
        spent.push(lead.id);
        continue;
      }
      const number = numbers[(campaign.dials_placed + placed.length) % numbers.length];
      placed.push({
        userId: campaign.user_id,
        assistantId: locked.assistant_id,
        assistantName: campaign.assistant_name ?? '',
        campaignId: campaign.id,
        campaignName: campaign.name,
        leadId: lead.id,
        secondaryContactId: contact?.id ?? null,
        to: contact?.phone_number ?? lead.phone_number,
        from: number.phone_number,
        phoneNumberId: number.id,
        variables: { ...lead.variables, ...(contact?.variables ?? {}) },
      });
    }
    // A lead whose every number is spent (budgets lowered after it was tried) is final, not dialable.
    if (spent.length > 0) await dialling.markLeadsSpent(spent);
    const claimed = await dialling.insertPlacedCalls(placed);
    await dialling.markLeadsScheduled(placed.map((call) => call.leadId));
    const contactIds = placed.flatMap((call) => (call.secondaryContactId === null ? [] : [call.secondaryContactId]));
    if (contactIds.length > 0) await dialling.markContactsScheduled(contactIds);
    await dialling.addDialsPlaced(campaign.id, placed.length);
    return { claimed };
  }

  /** The campaign's own numbers in their order, or else its assistant's number. */
  private async callerNumbers(dialling: DiallingRepository, campaign: ClaimedCampaign): Promise<CallerNumberRow[]> {
    const own = await dialling.findCampaignNumbers(campaign.id);
    if (own.length > 0 || campaign.assistant_number_id === null) return own;
    return dialling.findNumbersById(campaign.assistant_number_id);
  }

  /** For leads whose own number spent its budget: the first secondary contact of each still to be tried. */
  private async nextContacts(dialling: DiallingRepository, leadIds: number[]): Promise<Map<number, ContactRow>> {
    if (leadIds.length === 0) return new Map();
    const rows = await dialling.findNextContacts(leadIds, FINAL_LEAD_STATUSES);
    return new Map(rows.map((row) => [row.lead_id, row]));
  }

  private async completeIfDone(dialling: DiallingRepository, campaign: ClaimedCampaign): Promise<ClaimOutcome> {
    if (campaign.in_flight > 0) return { idle: 'nothing-due' };
    if (await dialling.hasLeadsIn(campaign.id, OPEN_LEAD_STATUSES)) return { idle: 'nothing-due' };
    await dialling.completeCampaign(campaign.id);
    this.logger.log({ campaignId: campaign.id }, 'campaign completed');
    return { idle: 'completed' };
  }
}
