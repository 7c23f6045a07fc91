import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  CALL_RESPONSE_COLUMNS,
  type CallEventRow,
  type CallLeadRow,
  type CallResponseRow,
  type CallRow,
} from '@app/contracts';
import { type EndedCall, settleLeadOfEndedCall } from './call-outcomes';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/**
 * A call to deliver a webhook of: what its webhooks show and the events' ids, with its assistant's webhook and its
 * lead (with its campaign), if any.
 */
export interface CallDeliveryRow
  extends CallResponseRow, Pick<CallRow, 'webhook_event_id' | 'started_event_id' | 'analysis_event_id'> {
  assistant_id: number;
  webhook_url: string | null;
  is_webhook_active: boolean;
  webhook_secret_sealed: string | null;
  lead: CallLeadRow | null;
}

/** A call to deliver `call.ended` of: also its transcript turns and tool calls, in order. */
export interface CallDelivery extends CallDeliveryRow {
  events: CallEventRow[];
}

/** The call, its assistant's webhook and its lead, as a delivery reads them. */
// Only what a webhook shows and a delivery needs: a call's row has grown columns of its own (the dial, the transfer,
// the analysis' bookkeeping), each parsed on every delivery if read. The lead and the turns are read by functions of
// the database (migration 1764210000000), whose statements stay planned on the connection: inline, planning them cost
// more than the rest of the delivery's statement.
const DELIVERY_COLUMNS = `${CALL_RESPONSE_COLUMNS.map((column) => `c.${column}`).join(', ')},
       c.assistant_id, c.webhook_event_id, c.started_event_id, c.analysis_event_id,
       a.webhook_url, a.is_webhook_active, a.webhook_secret_sealed,
       call_webhook_lead(c.lead_id) AS lead`;

/** A call the reaper ended, and what its lead's settling needs. */
export type ReapedCallRow = EndedCall & Pick<CallRow, 'assistant_id'>;

/**
 * The worker's statements on calls: the webhook deliveries (the call with its assistant's webhook, its events and
 * lead as the `call.ended` body names them, the answer kept and what was owed settled), the sweep of deliveries whose
 * job was lost, and the reaper of calls left open.
 */
@Injectable()
export class CallDeliveriesRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /**
   * The call with its assistant's webhook, its lead with the campaign, and its transcript turns and tool calls in
   * order: everything its `call.ended` body names, in one statement.
   */
  async findDeliveryById(id: number): Promise<CallDelivery | undefined> {
    const [call] = await this.rowsOf<CallDeliveryRow & { events: (Omit<CallEventRow, 'at'> & { at: string })[] }>(
      `SELECT ${DELIVERY_COLUMNS}, call_webhook_events(c.id) AS events
         FROM calls c JOIN assistants a ON a.id = c.assistant_id WHERE c.id = $1`,
      [id],
    );
    return call && { ...call, events: call.events.map((event) => ({ ...event, at: new Date(event.at) })) };
  }

  /** The call with its assistant's webhook and its lead, if its `call.started` webhook is owed. */
  findStartedDeliveryById(id: number): Promise<CallDeliveryRow | undefined> {
    return this.deliveryOf(id, 'c.started_webhook_due');
  }

  /** The call with its assistant's webhook and its lead, if a `call.analyzed` delivery of its analysis is owed. */
  findAnalyzedDeliveryById(id: number): Promise<CallDeliveryRow | undefined> {
    return this.deliveryOf(id, 'c.analysis_webhook_due');
  }

  /** The call with its assistant's webhook and its lead, if `owed` (a condition of this file's) holds. */
  private async deliveryOf(
    id: number,
    owed: 'c.started_webhook_due' | 'c.analysis_webhook_due',
  ): Promise<CallDeliveryRow | undefined> {
    const [call] = (await this.manager.query(
      `SELECT ${DELIVERY_COLUMNS}
         FROM calls c JOIN assistants a ON a.id = c.assistant_id WHERE c.id = $1 AND ${owed}`,
      [id],
    )) as CallDeliveryRow[];
    return call;
  }

  /** The `call.analyzed` event `eventId` is delivered or given up; a newer run's event stays owed. */
  async settleAnalyzedWebhook(id: number, eventId: string | null): Promise<void> {
    await this.manager.query(
      `UPDATE calls SET analysis_webhook_due = false
        WHERE id = $1 AND analysis_webhook_due AND analysis_event_id IS NOT DISTINCT FROM $2`,
      [id, eventId],
    );
  }

  /** No `call.ended` delivery is owed any more (the webhook was turned off, or the call is gone). */
  async settleWebhook(id: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET webhook_due = false WHERE id = $1 AND webhook_due`, [id]);
  }

  async settleStartedWebhook(id: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET started_webhook_due = false WHERE id = $1 AND started_webhook_due`, [
      id,
    ]);
  }

  /** Keeps the receiver's answer; a final one (delivered, or given up) also settles what was owed. */
  async recordWebhookResponse(id: number, response: Record<string, unknown>, final: boolean): Promise<void> {
    await this.rowsOf(`UPDATE calls SET webhook_response = $2, webhook_due = webhook_due AND NOT $3 WHERE id = $1`, [
      id,
      JSON.stringify(response),
      final,
    ]);
  }

  /** Calls whose `call.ended` delivery is owed and that ended more than `seconds` ago, oldest first. */
  owedWebhooks(seconds: number): Promise<{ id: number; ended_at: Date }[]> {
    return this.manager.query(
      `SELECT id, ended_at FROM calls
        WHERE webhook_due AND ended_at < now() - make_interval(secs => $1)
        ORDER BY ended_at LIMIT 500`,
      [seconds],
    );
  }

  /** What the finished delivery job of the call settled. */
  async clearWebhookDue(id: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET webhook_due = false WHERE id = $1`, [id]);
  }

  /**
   * Ends as `no-answer` the web calls still `initiated` after `seconds` (at most 500 a time): nobody joined their room
   * while their token could be used (a joined one is `in-progress` once its agent hears the person), so their account's
   * slot is given back then rather than at the stale timeout. Marks their webhook owed as `endStale` does; a web call
   * has no lead to settle.
   */
  async endUnjoinedWebCalls(seconds: number): Promise<{ id: number }[]> {
    const [rows] = (await this.manager.query(
      `UPDATE calls SET status = 'no-answer', ended_at = now(), updated_at = now(),
              webhook_event_id = COALESCE(webhook_event_id, 'msg_' || gen_random_uuid()::text),
              webhook_due = webhook_due OR COALESCE((SELECT a.is_webhook_active AND a.webhook_url IS NOT NULL
                                                       FROM assistants a WHERE a.id = calls.assistant_id), false),
              evaluation = evaluation || jsonb_build_object('reason', 'Nobody joined the web call.')
        WHERE id IN (SELECT id FROM calls WHERE status = 'initiated' AND type = 'web'
                        AND updated_at < now() - make_interval(secs => $1)
                      ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      [seconds],
    )) as [{ id: number }[], number];
    return rows;
  }

  /**
   * Ends as `failed` the calls in an open status not updated for `minutes` (at most 500 a time), marks their webhook
   * owed when their assistant's is on, and settles their leads, in one transaction.
   */
  endStale(openStatuses: readonly string[], minutes: number): Promise<ReapedCallRow[]> {
    return this.transaction(async (deliveries) => {
      const rows = (
        await deliveries.manager.query(
          `UPDATE calls SET status = 'failed', ended_at = now(), updated_at = now(),
                dial_state = CASE WHEN dial_state IN ('pending', 'dialing') THEN 'failed' ELSE dial_state END,
                webhook_event_id = COALESCE(webhook_event_id, 'msg_' || gen_random_uuid()::text),
                webhook_due = webhook_due OR COALESCE((SELECT a.is_webhook_active AND a.webhook_url IS NOT NULL
                                                         FROM assistants a WHERE a.id = calls.assistant_id), false),
                evaluation = evaluation || jsonb_build_object('reason', 'No final status was reported by the voice runtime.')
          WHERE id IN (SELECT id FROM calls WHERE status = ANY($1) AND updated_at < now() - make_interval(mins => $2)
                        ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED)
          RETURNING id, lead_id, secondary_contact_id, status, answered_by, assistant_id`,
          [openStatuses, minutes],
        )
      )[0] as ReapedCallRow[];
      for (const row of rows) await settleLeadOfEndedCall(deliveries.manager, row);
      return rows;
    });
  }
}
