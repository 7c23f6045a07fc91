import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components } from './generated/api.js';

type Schemas = components['schemas'];

export { WebhookVerificationError };

/** A transcript turn or a tool call the runtime reported, as the ended call's webhook carries it. */
export type WebhookCallEvent = Omit<Schemas['CallEventResponse'], 'type'>;

/**
 * What the service POSTs to an assistant's `webhook_url` (the webhook is not in the OpenAPI document): the call's
 * fields as `GET /api/user/calls/{id}` answers them but `webhook_response`, and its lead with the campaign.
 */
export type CallWebhookEvent =
  | { event: 'call.started'; call: WebhookCall }
  | { event: 'call.ended'; call: WebhookCall & { turns: WebhookCallEvent[]; tool_calls: WebhookCallEvent[] } }
  /** The call's post-call analysis settled (`done` or `failed`): `call.analysis` says how. */
  | { event: 'call.analyzed'; call: WebhookCall & { analysis: Schemas['CallAnalysisResponse'] } };

export type WebhookCall = Omit<Schemas['CallResponse'], 'webhook_response'> & {
  lead: {
    id: number;
    phone_number: string;
    variables: Record<string, unknown>;
    status: Schemas['LeadResponse']['status'];
    campaign: { id: number; name: string };
  } | null;
};

/**
 * Checks a webhook delivery as Standard Webhooks define it, with their library: the `webhook-signature` is the
 * HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the assistant's `whsec_` secret, and the timestamp
 * is within five minutes. `body` is the request's raw body, as received (not re-serialized JSON). Returns the event;
 * throws `WebhookVerificationError` for a delivery that is not the service's. Deduplicate on `webhook-id`: a retried
 * delivery keeps it.
 */
export function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string | Uint8Array,
): CallWebhookEvent {
  const event = new Webhook(secret).verify(
    typeof body === 'string' ? body : new TextDecoder().decode(body),
    headerRecord(headers),
  );
  return event as CallWebhookEvent;
}

function headerRecord(headers: Headers | Record<string, string | string[] | undefined>): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((value, name) => (record[name] = value));
  else
    for (const [name, value] of Object.entries(headers))
      if (value !== undefined) record[name] = Array.isArray(value) ? value.join(', ') : value;
  return record;
}
