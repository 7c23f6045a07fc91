import { toCallResponse, type CallResponseRow } from './call-response';
import { type CallEventResponse, type CallEventRow, toCallEventResponse } from './runtime.dto';

/** The lead of a call, with its campaign, as a webhook names it (libs/database's
 * `CallDeliveriesRepository` reads it). */
export interface CallLeadRow {
  id: number;
  phone_number: string;
  variables: Record<string, unknown>;
  status: string;
  campaign_id: number;
  campaign_name: string;
}

/** A call as its webhooks name it: its fields but the delivery's own answer, and its lead with its campaign. */
export function toWebhookCall(call: CallResponseRow & { lead: CallLeadRow | null }) {
  const { webhook_response: _response, ...fields } = toCallResponse(call);
  const { lead } = call;
  return {
    ...fields,
    lead: lead
      ? {
          id: lead.id,
          phone_number: lead.phone_number,
          variables: lead.variables,
          status: lead.status,
          campaign: { id: lead.campaign_id, name: lead.campaign_name },
        }
      : null,
  };
}

/** `call.ended` as the receiver gets it: the call, and what the runtime reported during it (turns, tool calls), in order. */
export function toCallEndedWebhook(call: CallResponseRow & { lead: CallLeadRow | null; events: CallEventRow[] }) {
  const entries = call.events.map((event) => ({ type: event.type, entry: toCallEventResponse(event) }));
  const strip = ({ type: _type, ...rest }: CallEventResponse) => rest;
  return {
    event: 'call.ended',
    call: {
      ...toWebhookCall(call),
      turns: entries.filter(({ type }) => type === 'transcript').map(({ entry }) => strip(entry)),
      tool_calls: entries.filter(({ type }) => type === 'tool_call').map(({ entry }) => strip(entry)),
    },
  };
}
