import type { EntityManager } from 'typeorm';

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

/**
 * Writes placed calls as `initiated` with a pending dial, in the caller's transaction, and returns their ids. They
 * are stamped with the time of the write, not of the transaction's start (which may have waited for a lock). The
 * external id is minted here: it names the call's room at the provider and is what the voice runtime reports the
 * call under, so the runtime's writes land on this row.
 */
export async function insertPlacedCalls(manager: EntityManager, calls: PlacedCall[]): Promise<number[]> {
  if (calls.length === 0) return [];
  const rows = (await manager.query(
    `INSERT INTO calls (external_id, user_id, assistant_id, assistant_name, campaign_id, campaign_name, lead_id,
                        secondary_contact_id, type, status, client_phone_number, assistant_phone_number, phone_number_id,
                        variables, dial_state, dial_started_at, created_at, updated_at)
     SELECT 'call-' || gen_random_uuid()::text, c.user_id, c.assistant_id, c.assistant_name, c.campaign_id,
            c.campaign_name, c.lead_id, c.secondary_contact_id, 'outbound', 'initiated', c.to_number, c.from_number,
            c.phone_number_id, c.variables, 'pending', clock_timestamp(), clock_timestamp(), clock_timestamp()
       FROM jsonb_to_recordset($1::jsonb) AS c(user_id int, assistant_id int, assistant_name text, campaign_id int,
            campaign_name text, lead_id int, secondary_contact_id int, to_number text, from_number text,
            phone_number_id int, variables jsonb, position int)
      ORDER BY c.position
     RETURNING id`,
    [
      JSON.stringify(
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
      ),
    ],
  )) as { id: number }[];
  return rows.map((row) => row.id);
}
