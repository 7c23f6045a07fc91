import type { EntityManager } from 'typeorm';

export interface EndedCall {
  id: number;
  lead_id: number | null;
  status: string;
  answered_by: string | null;
}

const UNREACHED = ['busy', 'no-answer', 'failed'];

/**
 * What a call's end does to its lead, in the caller's transaction: a call that reached someone completes it; one
 * that did not (busy, no answer, failed, or a machine answered) spends one try of the lead's single retry budget
 * and reschedules it after the campaign's `retry_interval`, until `max_retries` is spent.
 */
export async function settleLeadOfEndedCall(manager: EntityManager, call: EndedCall): Promise<void> {
  if (call.lead_id === null) return;
  const unreached = UNREACHED.includes(call.status) || call.answered_by === 'machine';
  if (!unreached) {
    await manager.query(
      `UPDATE leads SET status = 'completed', next_attempt_at = NULL, updated_at = now()
        WHERE id = $1 AND status <> 'blacklisted'`,
      [call.lead_id],
    );
    return;
  }
  await manager.query(
    `UPDATE leads l
        SET attempts = l.attempts + 1,
            status = CASE WHEN l.attempts + 1 >= c.max_retries THEN 'reached-max-retries' ELSE 'rescheduled' END,
            next_attempt_at = CASE WHEN l.attempts + 1 >= c.max_retries THEN NULL
                                   ELSE now() + make_interval(mins => c.retry_interval) END,
            updated_at = now()
       FROM campaigns c
      WHERE l.id = $1 AND c.id = l.campaign_id AND l.status <> 'blacklisted'`,
    [call.lead_id],
  );
}

/** A call that is under way moves its lead to `processing`. */
export async function markLeadInCall(manager: EntityManager, leadId: number | null): Promise<void> {
  if (leadId === null) return;
  await manager.query(
    `UPDATE leads SET status = 'processing', updated_at = now() WHERE id = $1 AND status NOT IN ('blacklisted', 'completed', 'reached-max-retries')`,
    [leadId],
  );
}
