import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import { Clock, DialWindow, insertPlacedCalls, isWithinDialWindow, PlacedCall } from '@app/calls';
import { FINAL_LEAD_STATUSES, OPEN_CALL_STATUSES, OPEN_LEAD_STATUSES } from '@app/contracts';
import { JobQueue, Jobs } from '@app/jobs';
import { CallPlacer } from './call-placer.service';

interface ClaimedCampaign extends DialWindow {
  id: number;
  user_id: number;
  name: string;
  assistant_id: number | null;
  assistant_name: string | null;
  assistant_number_id: number | null;
  max_calls_in_parallel: number;
  max_retries: number;
  dials_placed: number;
  in_flight: number;
}

interface DueLead {
  id: number;
  phone_number: string;
  variables: Record<string, unknown>;
  attempts: number;
}

interface Contact {
  id: number;
  lead_id: number;
  phone_number: string;
  variables: Record<string, unknown>;
}

export type ClaimOutcome =
  | { claimed: number[] }
  | { idle: 'not-running' | 'outside-hours' | 'no-slot' | 'no-caller-number' | 'nothing-due' | 'completed' };

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
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const outcome = await this.dataSource.transaction((manager) => this.claim(manager, campaignId));
    if ('claimed' in outcome) {
      await Promise.all(
        outcome.claimed.map((callId) =>
          this.placer.place(callId).catch((error: Error) => {
            this.logger.warn({ callId, error: error.message }, 'could not place a claimed call; the sweep will');
          }),
        ),
      );
    }
    return outcome;
  }

  /**
   * The periodic look: queues a claim for every running campaign (leads whose retry came due, a window that
   * opened) and re-queues dials that were claimed or begun but never settled within the lease (their worker died).
   */
  async sweep(): Promise<{ campaigns: number; resumedDials: number; settledDials: number }> {
    const campaigns: { id: number }[] = await this.dataSource.query(
      `SELECT id FROM campaigns WHERE status = 'in-progress' ORDER BY id`,
    );
    for (const { id } of campaigns) await this.jobs.enqueue(Jobs.dialCampaign, { campaignId: id });
    // A dial whose worker died after the call went out: the runtime has moved the call on since, so the dial is
    // settled by what the call became. Only a call still `initiated` can be dialled again.
    const [, settledDials] = (await this.dataSource.query(
      `UPDATE calls SET dial_state = CASE WHEN status = 'failed' THEN 'failed' ELSE 'dialed' END
        WHERE id IN (SELECT id FROM calls WHERE dial_state IN ('pending', 'dialing') AND status <> 'initiated'
                      ORDER BY dial_started_at LIMIT $1)`,
      [SWEEP_BATCH],
    )) as [unknown, number];
    // Oldest first: a dial taken again starts a new lease, so each look reaches further down any backlog.
    const unsettled: { id: number }[] = await this.dataSource.query(
      `SELECT id FROM calls WHERE dial_state IN ('pending', 'dialing') AND status = 'initiated'
          AND dial_started_at < now() - make_interval(secs => $1) ORDER BY dial_started_at LIMIT $2`,
      [this.config.dialLeaseSeconds, SWEEP_BATCH],
    );
    for (const { id } of unsettled) await this.jobs.enqueue(Jobs.placeCall, { callId: id });
    if (settledDials > 0) this.logger.warn({ dials: settledDials }, 'settled dials whose calls had moved on');
    if (unsettled.length > 0) this.logger.warn({ dials: unsettled.length }, 'resuming dials nobody settled');
    return { campaigns: campaigns.length, resumedDials: unsettled.length, settledDials };
  }

  private async claim(manager: EntityManager, campaignId: number): Promise<ClaimOutcome> {
    const now = this.clock.now();
    const [campaign] = (await manager.query(
      `SELECT c.id, c.user_id, c.name, c.assistant_id, a.name AS assistant_name, a.phone_number_id AS assistant_number_id,
              c.timezone, c.allowed_hours_start_time, c.allowed_hours_end_time, c.allowed_days,
              c.max_calls_in_parallel, c.max_retries, c.dials_placed
         FROM campaigns c LEFT JOIN assistants a ON a.id = c.assistant_id
        WHERE c.id = $1 AND c.status = 'in-progress'
          FOR UPDATE OF c`,
      [campaignId],
    )) as ClaimedCampaign[];
    if (!campaign || campaign.assistant_id === null) return { idle: 'not-running' };
    // Counted in a statement of its own, after the lock is held: a statement that waited for the lock still reads
    // the snapshot it started with, which misses the calls the previous holder just claimed.
    [{ in_flight: campaign.in_flight }] = await manager.query(
      `SELECT count(*)::int AS in_flight FROM calls WHERE campaign_id = $1 AND status = ANY($2)`,
      [campaign.id, OPEN_CALL_STATUSES],
    );
    const slots = campaign.max_calls_in_parallel - campaign.in_flight;
    if (slots <= 0) return { idle: 'no-slot' };
    if (!isWithinDialWindow(campaign, now)) return { idle: 'outside-hours' };

    const leads = (await manager.query(
      `SELECT id, phone_number, variables, attempts FROM leads
        WHERE campaign_id = $1 AND (status = 'created' OR (status = 'rescheduled' AND next_attempt_at <= $2))
        ORDER BY id LIMIT $3
          FOR UPDATE SKIP LOCKED`,
      [campaign.id, now, slots],
    )) as DueLead[];
    if (leads.length === 0) return this.completeIfDone(manager, campaign);

    const numbers = await this.callerNumbers(manager, campaign);
    if (numbers.length === 0) {
      this.logger.warn({ campaignId: campaign.id }, 'campaign has leads due but no phone number to call from');
      return { idle: 'no-caller-number' };
    }
    const contacts = await this.nextContacts(
      manager,
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
        assistantId: campaign.assistant_id,
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
    if (spent.length > 0) {
      await manager.query(
        `UPDATE leads SET status = 'reached-max-retries', next_attempt_at = NULL, updated_at = now() WHERE id = ANY($1)`,
        [spent],
      );
    }
    const claimed = await insertPlacedCalls(manager, placed);
    await manager.query(`UPDATE leads SET status = 'scheduled', updated_at = now() WHERE id = ANY($1)`, [
      placed.map((call) => call.leadId),
    ]);
    const contactIds = placed.flatMap((call) => (call.secondaryContactId === null ? [] : [call.secondaryContactId]));
    if (contactIds.length > 0) {
      await manager.query(
        `UPDATE lead_secondary_contacts SET status = 'scheduled', updated_at = now() WHERE id = ANY($1)`,
        [contactIds],
      );
    }
    await manager.query(`UPDATE campaigns SET dials_placed = dials_placed + $2 WHERE id = $1`, [
      campaign.id,
      placed.length,
    ]);
    return { claimed };
  }

  /** The campaign's own numbers in their order, or else its assistant's number. */
  private async callerNumbers(
    manager: EntityManager,
    campaign: ClaimedCampaign,
  ): Promise<{ id: number; phone_number: string }[]> {
    const own = await manager.query(
      `SELECT p.id, p.phone_number FROM campaign_phone_numbers cp JOIN phone_numbers p ON p.id = cp.phone_number_id
        WHERE cp.campaign_id = $1 ORDER BY cp.position`,
      [campaign.id],
    );
    if (own.length > 0 || campaign.assistant_number_id === null) return own;
    return manager.query(`SELECT id, phone_number FROM phone_numbers WHERE id = $1`, [campaign.assistant_number_id]);
  }

  /** For leads whose own number spent its budget: the first secondary contact of each still to be tried. */
  private async nextContacts(manager: EntityManager, leadIds: number[]): Promise<Map<number, Contact>> {
    if (leadIds.length === 0) return new Map();
    const rows = (await manager.query(
      `SELECT DISTINCT ON (lead_id) id, lead_id, phone_number, variables FROM lead_secondary_contacts
        WHERE lead_id = ANY($1) AND status <> ALL($2)
        ORDER BY lead_id, position, id`,
      [leadIds, FINAL_LEAD_STATUSES],
    )) as Contact[];
    return new Map(rows.map((row) => [row.lead_id, row]));
  }

  private async completeIfDone(manager: EntityManager, campaign: ClaimedCampaign): Promise<ClaimOutcome> {
    if (campaign.in_flight > 0) return { idle: 'nothing-due' };
    const [{ open }] = await manager.query(
      `SELECT EXISTS (SELECT 1 FROM leads WHERE campaign_id = $1 AND status = ANY($2)) AS open`,
      [campaign.id, OPEN_LEAD_STATUSES],
    );
    if (open) return { idle: 'nothing-due' };
    await manager.query(`UPDATE campaigns SET status = 'completed', updated_at = now() WHERE id = $1`, [campaign.id]);
    this.logger.log({ campaignId: campaign.id }, 'campaign completed');
    return { idle: 'completed' };
  }
}
