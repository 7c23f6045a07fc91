import { randomBytes } from 'node:crypto';
import { signWebhook } from '../../../libs/crypto/src/webhook-signing';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

// A secret as the service issues them (see the assistants' `webhook_secret`), and a body as the worker sends it.
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const BODY = JSON.stringify({ event: 'call.started', call: { id: 7, status: 'in-progress', lead: null } });

/** The headers the worker sends with a delivery signed at `timestamp` (seconds). */
function delivery(timestamp = Math.floor(Date.now() / 1000), body = BODY, secret = SECRET) {
  const id = 'c0a8f7e2-5d4b-4c8e-9f1a-2b3c4d5e6f70';
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}

describe('verifyWebhook, through the Standard Webhooks library, of what the worker signs', () => {
  it('returns the event of a delivery the worker signed, from a string, bytes or a Headers object', () => {
    const headers = delivery();
    expect(verifyWebhook(SECRET, headers, BODY)).toEqual(JSON.parse(BODY));
    expect(verifyWebhook(SECRET, new Headers(headers), new TextEncoder().encode(BODY)).event).toBe('call.started');
    // Node's request headers: lower-cased names, a value possibly repeated.
    expect(verifyWebhook(SECRET, { ...headers, 'x-forwarded-for': ['10.0.0.1', '10.0.0.2'] }, BODY).event).toBe(
      'call.started',
    );
  });

  it('refuses a changed body, another secret, a stale or future timestamp, and missing headers', () => {
    const now = Math.floor(Date.now() / 1000);
    const refusals = [
      () => verifyWebhook(SECRET, delivery(), BODY.replace('7', '8')),
      () => verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, delivery(), BODY),
      () => verifyWebhook(SECRET, delivery(now - 10 * 60), BODY),
      () => verifyWebhook(SECRET, delivery(now + 10 * 60), BODY),
      () => verifyWebhook(SECRET, { 'webhook-id': 'x', 'webhook-timestamp': String(now) }, BODY),
    ];
    for (const refusal of refusals) expect(refusal).toThrow(WebhookVerificationError);
  });
});
