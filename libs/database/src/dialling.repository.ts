import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CallRow } from '@app/contracts';
import { CallLimitReached, lockedCallSlot } from './account-call-slots.repository';
import { settleLeadOfEndedCall } from './call-outcomes';
import { outboundTrunkOf } from './phone-number-holders';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** An outbound call the service places itself, as it is written before anyone is dialled. */
export interface PlacedCall {
  userId: number;
  assistantId: number;
  assistantName: string;
  campaignId: number | null;
  campaignName: string | null;
  leadId: number | null;
  secondaryContactId: number | null;
  to: string;
  from: string;
  phoneNumberId: number | null;
  variables: Record<string, unknown>;
}

/** The assistant a call is placed for, with the number it calls from (null without one). */
export interface CallerAssistantRow {
  id: number;
  name: string;
  type: string;
  number_id: number | null;
  phone_number: string | null;
  /** The provider's outbound trunk of its number (see `outboundTrunkOf`); null: the number cannot place calls. */
  outbound_trunk_id: string | null;
}

/** A placed call taken for dialling: what the dial needs, and the dial's state before it was taken. */
export interface TakenCallRow extends Pick<
  CallRow,
  'id' | 'external_id' | 'assistant_id' | 'campaign_id' | 'lead_id' | 'secondary_contact_id' | 'variables'
> {
  /** A placed call is a phone call: both its numbers are set. */
  client_phone_number: string;
  assistant_phone_number: string;
  outbound_trunk_id: string | null;
  previous_state: string;
}

/** A running campaign as its claim reads it (locked), with its assistant. */
export interface ClaimedCampaignRow {
  id: number;
  user_id: number;
  name: string;
  assistant_id: number | null;
  assistant_name: string | null;
  assistant_number_id: number | null;
  timezone: string;
  allowed_hours_start_time: string | null;
  allowed_hours_end_time: string | null;
  allowed_days: string[];
  max_calls_in_parallel: number;
  max_retries: number;
  dials_placed: number;
  /** Calls the campaign's account may still start (its limit less its calls in progress). */
  account_slots: number;
}

/** A lead due to be called. */
export interface DueLeadRow {
  id: number;
  phone_number: string;
  variables: Record<string, unknown>;
  attempts: number;
}

/** A lead's secondary contact still to be tried. */
export interface ContactRow {
  id: number;
  lead_id: number;
  phone_number: string;
  variables: Record<string, unknown>;
}

/** A number calls are placed from. */
export interface CallerNumberRow {
  id: number;
  phone_number: string;
}

/** The placed calls' insert, to be followed by `FROM <placed calls>`, as both ways of writing them share it. */
const INSERT_PLACED_CALLS = `INSERT INTO calls (external_id, user_id, assistant_id, assistant_name, campaign_id, campaign_name, lead_id,
                        secondary_contact_id, type, status, client_phone_number, assistant_phone_number, phone_number_id,
                        variables, dial_state, dial_started_at, created_at, updated_at)
     SELECT 'call-' || gen_random_uuid()::text, c.user_id, c.assistant_id, c.assistant_name, c.campaign_id,
            c.campaign_name, c.lead_id, c.secondary_contact_id, 'outbound', 'initiated', c.to_number, c.from_number,
            c.phone_number_id, c.variables, 'pending', clock_timestamp(), clock_timestamp(), clock_timestamp()`;

/** The placed calls of `placedCallsJson`, as the first parameter, one row each (`c`). */
const PLACED_CALLS = `jsonb_to_recordset($1::jsonb) AS c(user_id int, assistant_id int, assistant_name text, campaign_id int,
            campaign_name text, lead_id int, secondary_contact_id int, to_number text, from_number text,
            phone_number_id int, variables jsonb, position int)`;

function placedCallsJson(calls: PlacedCall[]): string {
  return JSON.stringify(
    calls.map((call, position) => ({
      user_id: call.userId,
      assistant_id: call.assistantId,
      assistant_name: call.assistantName,
      campaign_id: call.campaignId,
      campaign_name: call.campaignName,
      lead_id: call.leadId,
      secondary_contact_id: call.secondaryContactId,
      to_number: call.to,
      from_number: call.from,
      phone_number_id: call.phoneNumberId,
      variables: call.variables,
      position,
    })),
  );
}

/**
 * The dialler's reads and writes: placing calls (a campaign's claims, `make_call`, a web call), taking them for dialling and
 * settling their dials. The claim's statements run in the claim's transaction (joined with `within`), which holds
 * the campaign's row lock throughout. Reads by call or campaign id are the system's own; `make_call`'s take the owner id.
 */
@Injectable()
export class DiallingRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /**
   * The account's assistant a call is placed for, with its number, locked so that it cannot be deleted before the
   * call is written.
   */
  async lockCallerAssistant(ownerId: number, assistantId: number): Promise<CallerAssistantRow | undefined> {
    const [assistant] = await this.manager.query(
      `SELECT a.id, a.name, a.type, p.id AS number_id, p.phone_number, ${outboundTrunkOf('p.id')} AS outbound_trunk_id
           FROM assistants a LEFT JOIN phone_numbers p ON p.id = a.phone_number_id
          WHERE a.id = $1 AND a.user_id = $2
            FOR KEY SHARE OF a`,
      [assistantId, ownerId],
    );
    return assistant;
  }

  /**
   * Writes placed calls as `initiated` with a pending dial, in the caller's transaction, and returns their ids. They
   * are stamped with the time of the write, not of the transaction's start (which may have waited for a lock). The
   * external id is minted here: it names the call's room at the provider and is what the voice runtime reports the
   * call under, so the runtime's writes land on this row. The caller has made sure the account has slots for them
   * (a campaign's claim holds its account's slot row, see `lockRunningCampaignById`).
   */
  async insertPlacedCalls(calls: PlacedCall[]): Promise<number[]> {
    if (calls.length === 0) return [];
    const rows = (await this.manager.query(
      `${INSERT_PLACED_CALLS} FROM ${PLACED_CALLS} ORDER BY c.position RETURNING id`,
      [placedCallsJson(calls)],
    )) as { id: number }[];
    return rows.map((row) => row.id);
  }

  /**
   * Writes one placed call as `insertPlacedCalls` does, in the same statement as it takes one of its account's call
   * slots (the account's limit, else `defaultLimit`): its id, or `CallLimitReached` when the account has as many
   * calls in progress as it may, and nothing is written.
   */
  async insertPlacedCallWithinLimit(call: PlacedCall, defaultLimit: number): Promise<number | CallLimitReached> {
    const [row] = (await this.manager.query(
      `WITH ${lockedCallSlot('$2', '$3')},
            placed AS (${INSERT_PLACED_CALLS} FROM ${PLACED_CALLS} JOIN slot ON slot.free > 0 RETURNING id)
       SELECT slot.max_concurrent_calls, placed.id FROM slot LEFT JOIN placed ON true`,
      [placedCallsJson([call]), call.userId, defaultLimit],
    )) as { max_concurrent_calls: number; id: number | null }[];
    if (!row) throw new Error(`Account ${call.userId} has no call slot row`);
    return row.id ?? new CallLimitReached(row.max_concurrent_calls);
  }

  /**
   * Writes a web call of the account's assistant as `initiated`, with no phone numbers and no dial, in the same
   * statement as it takes one of its account's call slots, as `insertPlacedCallWithinLimit` does: the call, or
   * `CallLimitReached` and nothing written. The external id names its room.
   */
  async insertWebCallWithinLimit(
    call: { userId: number; assistantId: number; assistantName: string; variables: Record<string, unknown> },
    defaultLimit: number,
  ): Promise<CallRow | CallLimitReached> {
    const [row] = (await this.manager.query(
      `WITH ${lockedCallSlot('$1', '$2')},
            written AS (
              INSERT INTO calls (external_id, user_id, assistant_id, assistant_name, type, status, variables,
                                 created_at, updated_at)
              SELECT 'call-' || gen_random_uuid()::text, $1, $3, $4, 'web', 'initiated', $5::jsonb,
                     clock_timestamp(), clock_timestamp()
                FROM slot WHERE slot.free > 0
              RETURNING *)
       SELECT written.*, slot.max_concurrent_calls AS slot_limit FROM slot LEFT JOIN written ON true`,
      [call.userId, defaultLimit, call.assistantId, call.assistantName, JSON.stringify(call.variables)],
    )) as (CallRow & { slot_limit: number })[];
    if (!row) throw new Error(`Account ${call.userId} has no call slot row`);
    const { slot_limit: maxConcurrentCalls, ...written } = row;
    return written.id === null ? new CallLimitReached(maxConcurrentCalls) : written;
  }

  /** Removes a web call that never started (its room could not be made): its slot is given back with it. */
  async deleteUnstartedWebCall(userId: number, callId: number): Promise<void> {
    await this.manager.query(
      `DELETE FROM calls WHERE id = $1 AND user_id = $2 AND type = 'web' AND status = 'initiated'`,
      [callId, userId],
    );
  }

  // Taking and settling a dial.

  /**
   * Moves the call's dial from `pending` (or from `dialing` whose lease of `leaseSeconds` ran out) to `dialing` and
   * returns the call; undefined when it is not there to take.
   */
  async takeById(callId: number, leaseSeconds: number): Promise<TakenCallRow | undefined> {
    const [rows] = (await this.manager.query(
      `WITH before AS (SELECT id, dial_state FROM calls WHERE id = $1 FOR UPDATE)
       UPDATE calls c SET dial_state = 'dialing', dial_started_at = now()
         FROM before
        WHERE c.id = before.id AND c.status = 'initiated'
          AND (before.dial_state = 'pending'
               OR (before.dial_state = 'dialing' AND c.dial_started_at < now() - make_interval(secs => $2)))
        RETURNING c.id, c.external_id, c.assistant_id, c.campaign_id, c.lead_id, c.secondary_contact_id,
                  c.client_phone_number, c.assistant_phone_number, c.variables, before.dial_state AS previous_state,
                  ${outboundTrunkOf('c.phone_number_id')} AS outbound_trunk_id`,
      [callId, leaseSeconds],
    )) as [TakenCallRow[], number];
    return rows[0];
  }

  async markDialed(callId: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET dial_state = 'dialed' WHERE id = $1 AND dial_state = 'dialing'`, [
      callId,
    ]);
  }

  async markDialFailed(callId: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET dial_state = 'failed' WHERE id = $1`, [callId]);
  }

  /** Ends the call `failed` (its assistant was deleted before it was placed) and settles its lead, in one transaction. */
  failWithoutAssistant(call: TakenCallRow): Promise<void> {
    return this.transaction(async (dialling) => {
      await dialling.manager.query(
        `UPDATE calls SET status = 'failed', dial_state = 'failed', ended_at = now(), updated_at = now(),
                evaluation = evaluation || jsonb_build_object('reason', 'The assistant was deleted before the call was placed.')
          WHERE id = $1`,
        [call.id],
      );
      await settleLeadOfEndedCall(dialling.manager, { ...call, status: 'failed', answered_by: null });
    });
  }

  /** Whether the local dialer was asked for this attempt already. */
  async hasLocalDialRequest(attemptId: string): Promise<boolean> {
    return (
      (await this.manager.query(`SELECT 1 FROM local_dial_requests WHERE attempt_id = $1 LIMIT 1`, [attemptId]))
        .length > 0
    );
  }

  /** What the local dialer was asked to do, for development and tests to see. */
  async insertLocalDialRequest(attemptId: string, request: object): Promise<void> {
    await this.manager.query(`INSERT INTO local_dial_requests (attempt_id, request) VALUES ($1, $2)`, [
      attemptId,
      JSON.stringify(request),
    ]);
  }

  // The periodic look.

  async findRunningCampaignIds(): Promise<number[]> {
    const campaigns: { id: number }[] = await this.manager.query(
      `SELECT id FROM campaigns WHERE status = 'in-progress' ORDER BY id`,
    );
    return campaigns.map(({ id }) => id);
  }

  /**
   * Settles up to `limit` dials whose calls the runtime has moved on since (their worker died after the call went
   * out) by what the call became; returns how many.
   */
  settleMovedOnDials(limit: number): Promise<number> {
    return this.changed(
      `UPDATE calls SET dial_state = CASE WHEN status = 'failed' THEN 'failed' ELSE 'dialed' END
        WHERE id IN (SELECT id FROM calls WHERE dial_state IN ('pending', 'dialing') AND status <> 'initiated'
                      ORDER BY dial_started_at LIMIT $1)`,
      [limit],
    );
  }

  /** Up to `limit` calls still `initiated` whose dial nobody settled within `leaseSeconds`, oldest first. */
  async findUnsettledDialIds(leaseSeconds: number, limit: number): Promise<number[]> {
    const unsettled: { id: number }[] = await this.manager.query(
      `SELECT id FROM calls WHERE dial_state IN ('pending', 'dialing') AND status = 'initiated'
          AND dial_started_at < now() - make_interval(secs => $1) ORDER BY dial_started_at LIMIT $2`,
      [leaseSeconds, limit],
    );
    return unsettled.map(({ id }) => id);
  }

  // A campaign's claim, in its transaction.

  /**
   * The campaign, if it is running, and its account's call slots (the account's limit, else `defaultLimit`), both
   * locked until the claim's transaction ends: calls that end meanwhile wait to give their slot back, and no other
   * writer takes one, so the claim may fill exactly the slots it read.
   */
  async lockRunningCampaignById(campaignId: number, defaultLimit: number): Promise<ClaimedCampaignRow | undefined> {
    const [campaign] = (await this.manager.query(
      `SELECT c.id, c.user_id, c.name, c.assistant_id, a.name AS assistant_name, a.phone_number_id AS assistant_number_id,
              c.timezone, c.allowed_hours_start_time, c.allowed_hours_end_time, c.allowed_days,
              c.max_calls_in_parallel, c.max_retries, c.dials_placed,
              GREATEST(COALESCE(s.max_concurrent_calls, $2::int) - s.in_progress, 0) AS account_slots
         FROM campaigns c JOIN account_call_slots s ON s.user_id = c.user_id
         LEFT JOIN assistants a ON a.id = c.assistant_id
        WHERE c.id = $1 AND c.status = 'in-progress'
          FOR UPDATE OF c, s`,
      [campaignId, defaultLimit],
    )) as ClaimedCampaignRow[];
    return campaign;
  }

  /**
   * How many of the campaign's calls are in one of `statuses`. A statement of its own, after the campaign's lock is
   * held: one that waited for the lock still reads the snapshot it started with, which misses the calls the previous
   * holder just claimed.
   */
  async countCampaignCalls(campaignId: number, statuses: readonly string[]): Promise<number> {
    const [{ in_flight: inFlight }] = await this.manager.query(
      `SELECT count(*)::int AS in_flight FROM calls WHERE campaign_id = $1 AND status = ANY($2)`,
      [campaignId, statuses],
    );
    return inFlight;
  }

  /**
   * Marks that a campaign of the account waits for a call slot, under the claim's lock of the account's slot row: the
   * next call of the account to end has its campaigns looked at once (`CallWritesRepository.takeWaitingCampaigns`).
   */
  async markCampaignsWaiting(userId: number): Promise<void> {
    await this.manager.query(
      `UPDATE account_call_slots SET campaigns_waiting = true WHERE user_id = $1 AND NOT campaigns_waiting`,
      [userId],
    );
  }

  /** Up to `limit` of the campaign's leads due at `now`, oldest first; those an edit holds are skipped. */
  lockDueLeads(campaignId: number, now: Date, limit: number): Promise<DueLeadRow[]> {
    return this.manager.query(
      `SELECT id, phone_number, variables, attempts FROM leads
        WHERE campaign_id = $1 AND (status = 'created' OR (status = 'rescheduled' AND next_attempt_at <= $2))
        ORDER BY id LIMIT $3
          FOR UPDATE SKIP LOCKED`,
      [campaignId, now, limit],
    );
  }

  /** The campaign's own caller numbers, in their order. */
  findCampaignNumbers(campaignId: number): Promise<CallerNumberRow[]> {
    return this.manager.query(
      `SELECT p.id, p.phone_number FROM campaign_phone_numbers cp JOIN phone_numbers p ON p.id = cp.phone_number_id
        WHERE cp.campaign_id = $1 ORDER BY cp.position`,
      [campaignId],
    );
  }

  /** The number (none: an empty list). */
  findNumbersById(id: number): Promise<CallerNumberRow[]> {
    return this.manager.query(`SELECT id, phone_number FROM phone_numbers WHERE id = $1`, [id]);
  }

  /** Of each of the leads, the first secondary contact not in one of `finalStatuses`. */
  findNextContacts(leadIds: number[], finalStatuses: readonly string[]): Promise<ContactRow[]> {
    return this.manager.query(
      `SELECT DISTINCT ON (lead_id) id, lead_id, phone_number, variables FROM lead_secondary_contacts
        WHERE lead_id = ANY($1) AND status <> ALL($2)
        ORDER BY lead_id, position, id`,
      [leadIds, finalStatuses],
    );
  }

  /** Leads whose every number spent its budget: final. */
  async markLeadsSpent(leadIds: number[]): Promise<void> {
    await this.manager.query(
      `UPDATE leads SET status = 'reached-max-retries', next_attempt_at = NULL, updated_at = now() WHERE id = ANY($1)`,
      [leadIds],
    );
  }

  async markLeadsScheduled(leadIds: (number | null)[]): Promise<void> {
    await this.manager.query(`UPDATE leads SET status = 'scheduled', updated_at = now() WHERE id = ANY($1)`, [leadIds]);
  }

  async markContactsScheduled(contactIds: number[]): Promise<void> {
    await this.manager.query(
      `UPDATE lead_secondary_contacts SET status = 'scheduled', updated_at = now() WHERE id = ANY($1)`,
      [contactIds],
    );
  }

  /** Counts `placed` more dials of the campaign: its caller numbers rotate by this count. */
  async addDialsPlaced(campaignId: number, placed: number): Promise<void> {
    await this.manager.query(`UPDATE campaigns SET dials_placed = dials_placed + $2 WHERE id = $1`, [
      campaignId,
      placed,
    ]);
  }

  /** Whether the campaign has a lead in one of `statuses`. */
  async hasLeadsIn(campaignId: number, statuses: readonly string[]): Promise<boolean> {
    const [{ open }] = await this.manager.query(
      `SELECT EXISTS (SELECT 1 FROM leads WHERE campaign_id = $1 AND status = ANY($2)) AS open`,
      [campaignId, statuses],
    );
    return open;
  }

  async completeCampaign(campaignId: number): Promise<void> {
    await this.manager.query(`UPDATE campaigns SET status = 'completed', updated_at = now() WHERE id = $1`, [
      campaignId,
    ]);
  }
}
