import type { EntityManager } from 'typeorm';
import { FINAL_LEAD_STATUSES, UNREACHED_CALL_STATUSES } from '@app/contracts';

export interface EndedCall {
  id: number;
  lead_id: number | null;
  /** Set when the call went to one of the lead's secondary contacts rather than its own number. */
  secondary_contact_id?: number | null;
  status: string;
  answered_by: string | null;
}

/**
 * What a call's end does to its lead, in the caller's transaction. A call that reached someone completes the lead
 * (and the secondary contact it went to). One that did not (busy, no answer, failed, or a machine answered) spends
 * one try: of the lead's single retry budget when it went to the lead's own number, else of that contact's own
 * budget. While a budget is left, or a secondary contact is still untried, the lead is rescheduled after the
 * campaign's `retry_interval`; once all are spent it has `reached-max-retries`.
 */
export async function settleLeadOfEndedCall(manager: EntityManager, call: EndedCall): Promise<void> {
  if (call.lead_id === null) return;
  const contactId = call.secondary_contact_id ?? null;
  const unreached = UNREACHED_CALL_STATUSES.includes(call.status) || call.answered_by === 'machine';
  if (!unreached) {
    if (contactId !== null) {
      await manager.query(`UPDATE lead_secondary_contacts SET status = 'completed', updated_at = now() WHERE id = $1`, [
        contactId,
      ]);
    }
    await manager.query(
      `UPDATE leads SET status = 'completed', next_attempt_at = NULL, updated_at = now()
        WHERE id = $1 AND status <> 'blacklisted'`,
      [call.lead_id],
    );
    return;
  }
  if (contactId !== null) {
    await manager.query(
      `UPDATE lead_secondary_contacts s
          SET attempts = s.attempts + 1,
              status = CASE WHEN s.attempts + 1 >= c.max_retries THEN 'reached-max-retries' ELSE 'rescheduled' END,
              updated_at = now()
         FROM leads l JOIN campaigns c ON c.id = l.campaign_id
        WHERE s.id = $1 AND l.id = s.lead_id`,
      [contactId],
    );
  }
  const retryLeft = `(l.attempts + $2::int < c.max_retries OR EXISTS (
      SELECT 1 FROM lead_secondary_contacts s WHERE s.lead_id = l.id AND s.status <> ALL($3)))`;
  await manager.query(
    `UPDATE leads l
        SET attempts = l.attempts + $2::int,
            status = CASE WHEN ${retryLeft} THEN 'rescheduled' ELSE 'reached-max-retries' END,
            next_attempt_at = CASE WHEN ${retryLeft} THEN now() + make_interval(mins => c.retry_interval) END,
            updated_at = now()
       FROM campaigns c
      WHERE l.id = $1 AND c.id = l.campaign_id AND l.status <> 'blacklisted'`,
    [call.lead_id, contactId === null ? 1 : 0, FINAL_LEAD_STATUSES],
  );
}

/** A call that is under way moves its lead (and the secondary contact it went to) to `processing`. */
export async function markLeadInCall(
  manager: EntityManager,
  call: { lead_id: number | null; secondary_contact_id?: number | null },
): Promise<void> {
  if (call.lead_id === null) return;
  await manager.query(
    `UPDATE leads SET status = 'processing', updated_at = now()
      WHERE id = $1 AND status <> 'blacklisted' AND status <> ALL($2)`,
    [call.lead_id, FINAL_LEAD_STATUSES],
  );
  if (call.secondary_contact_id) {
    await manager.query(
      `UPDATE lead_secondary_contacts SET status = 'processing', updated_at = now()
        WHERE id = $1 AND status <> ALL($2)`,
      [call.secondary_contact_id, FINAL_LEAD_STATUSES],
    );
  }
}
