import { createHmac, randomBytes } from 'node:crypto';

/** How the service's signed requests (webhook deliveries, the ring-time hook) introduce themselves to a receiver. */
export const WEBHOOK_USER_AGENT = 'VoiceAssistantWebhooks/1.0';

/** `whsec_` and 32 random bytes in base64, as Standard Webhooks signing secrets are written. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with the
 * bytes of the `whsec_` secret.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of a JSON request signed now: `webhook-id`, `webhook-timestamp` (seconds), `webhook-signature`. */
export function signedWebhookHeaders(secret: string, id: string, body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}
