import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AnalysisPlan, CallAnalysis, PostCallField } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A call to analyse, with what its assistant asks of the analysis (its fields null when the assistant is gone). */
export interface CallToAnalyseRow {
  id: number;
  user_id: number;
  transcript: string;
  analysis: CallAnalysis | null;
  analysis_run: number;
  analysis_webhook_due: boolean;
  assistant_id: number | null;
  /** The assistant's plan; null: the defaults. */
  plan: AnalysisPlan | null;
  post_call_schema: PostCallField[] | null;
  system_prompt: string | null;
  /** Whether the assistant's webhook is on: a settled analysis then owes it a `call.analyzed`. */
  webhook_on: boolean;
}

/** An analysis, or its `call.analyzed` delivery, still owed. */
export interface OwedAnalysisRow {
  id: number;
  analysis_run: number;
  status: string;
  analysis_webhook_due: boolean;
  analysis_changed_at: Date;
}

/**
 * The worker's statements on calls' post-call analyses: the call with its assistant's plan, the outcome written once
 * (only by the run that is current and still pending), and the sweep of analyses and deliveries whose job was lost.
 */
@Injectable()
export class CallAnalysesRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  async findToAnalyse(callId: number): Promise<CallToAnalyseRow | undefined> {
    const [row] = (await this.manager.query(
      `SELECT c.id, c.user_id, c.transcript, c.analysis, c.analysis_run, c.analysis_webhook_due, c.assistant_id,
              a.analysis AS plan, a.post_call_schema, a.system_prompt,
              COALESCE(a.webhook_url IS NOT NULL AND a.is_webhook_active, false) AS webhook_on
         FROM calls c LEFT JOIN assistants a ON a.id = c.assistant_id
        WHERE c.id = $1`,
      [callId],
    )) as CallToAnalyseRow[];
    return row;
  }

  /**
   * Writes the outcome of run `run`, if it is still the call's current run and pending; a `call.analyzed` delivery
   * is then owed when `notify` (a new event id, so a receiver tells runs apart). False: another wrote it, or a
   * re-run replaced this run.
   */
  async settle(
    callId: number,
    run: number,
    analysis: CallAnalysis,
    success: boolean | null,
    notify: boolean,
  ): Promise<boolean> {
    return (
      (await this.changed(
        `UPDATE calls SET analysis = $3, analysis_success = $4, analysis_changed_at = now(), updated_at = now(),
                analysis_event_id = CASE WHEN $5 THEN 'msg_' || gen_random_uuid()::text ELSE analysis_event_id END,
                analysis_webhook_due = $5
          WHERE id = $1 AND analysis_run = $2 AND analysis->>'status' = 'pending'`,
        [callId, run, JSON.stringify(analysis), success, notify],
      )) > 0
    );
  }

  /**
   * Calls whose analysis is pending, or whose `call.analyzed` delivery is owed, since more than `seconds` ago, oldest
   * first (at most 500).
   */
  owed(seconds: number): Promise<OwedAnalysisRow[]> {
    return this.manager.query(
      `SELECT id, analysis_run, analysis->>'status' AS status, analysis_webhook_due, analysis_changed_at FROM calls
        WHERE (analysis->>'status' = 'pending' OR analysis_webhook_due)
          AND analysis_changed_at < now() - make_interval(secs => $1)
        ORDER BY analysis_changed_at LIMIT 500`,
      [seconds],
    );
  }
}
