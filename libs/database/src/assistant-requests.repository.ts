import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AssistantRequestOutcome, CallRow } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** An assistant the ring-time hook's answer named, as far as deciding whether it may take the call needs. */
export interface NamedAssistantRow {
  id: number;
  status: string;
  type: string;
}

/** What the hook's answer does to its call: the assistant that takes it (else the number's), variables over its own. */
export interface AssistantRequestSettlement {
  outcome: AssistantRequestOutcome & { message?: string | null };
  assistantId?: number;
  variables?: Record<string, unknown>;
}

/**
 * The ring-time hook's statements on a call the voice runtime opens (they act for no account: a write notes the
 * call's account, through `writeForAccount`, so its next reads find it).
 */
@Injectable()
export class AssistantRequestsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** The account's assistant with that id; undefined for another account's, as for one that does not exist. */
  async findAssistant(userId: number, id: number): Promise<NamedAssistantRow | undefined> {
    const [row] = (await this.manager.query(`SELECT id, status, type FROM assistants WHERE id = $1 AND user_id = $2`, [
      id,
      userId,
    ])) as NamedAssistantRow[];
    return row;
  }

  /**
   * Records the hook's outcome on a call still waiting for it, in one statement: the assistant named (of the call's
   * account; one deleted meanwhile leaves the call's), the variables merged over the call's, the outcome. Undefined
   * when the call no longer waits (another session settled it first).
   */
  async settle(callId: number, settlement: AssistantRequestSettlement): Promise<CallRow | undefined> {
    const [row] = await this.writeForAccount<CallRow>(
      `WITH settled AS (
         UPDATE calls
            SET assistant_id = COALESCE((SELECT id FROM assistants WHERE id = $2 AND user_id = calls.user_id),
                                        assistant_id),
                assistant_name = COALESCE((SELECT name FROM assistants WHERE id = $2 AND user_id = calls.user_id),
                                          assistant_name),
                variables = variables || $3::jsonb,
                assistant_request = $4::jsonb,
                updated_at = now()
          WHERE id = $1 AND assistant_request->>'status' = 'pending'
          RETURNING *
       ) SELECT *, user_id AS written_for FROM settled`,
      [
        callId,
        settlement.assistantId ?? null,
        JSON.stringify(settlement.variables ?? {}),
        JSON.stringify(settlement.outcome),
      ],
    );
    return row;
  }
}
