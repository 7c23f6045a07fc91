import { createHmac } from 'node:crypto';
import { type LocalSite, type RouteHandler, startLocalSite } from '../../libs/outbound-http/test/local-site';
import type { TestAccount } from './factories';
import type { Stack } from './stack';
import { waitFor, waitForDocument } from './wait-for';

/** What the voice runtime's knowledge look-ups are expected to find. */
export const REFUNDS_PASSAGE =
  'Refunds are paid within fourteen days of the returned parcel arriving at our warehouse.';

/** A site on 127.0.0.1 with a webhook receiver (`/hook`) and the endpoint of `orderToolRequest` (`/orders`). */
export function startRuntimeSite(routes: Record<string, RouteHandler> = {}): Promise<LocalSite> {
  return startLocalSite({
    '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    '/orders': (_request, response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ order: 'A-17', status: 'shipped' })),
    ...routes,
  });
}

/** The webhook deliveries the site's `/hook` received for one call and event, with their parsed bodies. */
export function webhookDeliveries(site: LocalSite, event: string, callId: number) {
  return site.requests
    .filter((request) => request.path === '/hook')
    .map((request) => ({ request, body: JSON.parse(request.body) }))
    .filter(({ body }) => body.event === event && body.call.id === callId);
}

/** An independent Standard Webhooks check, as a receiver would write it. */
export function verifiesWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
    .digest('base64');
  return String(headers['webhook-signature'])
    .split(' ')
    .some((signature) => signature === `v1,${expected}`);
}

/** The "Support FAQ" knowledgebase, its one document (the refunds passage) made searchable by the worker. */
export async function createFaqKnowledgebase(stack: Stack, account: TestAccount): Promise<number> {
  const knowledgebase = (
    await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Support FAQ' }).expect(201)
  ).body.data;
  const document = await stack.http
    .post(`/api/user/knowledgebases/${knowledgebase.id}/documents`)
    .set(account.auth)
    .field('name', 'Returns')
    .field('type', 'txt')
    .attach('file', Buffer.from(REFUNDS_PASSAGE), 'returns.txt')
    .expect(201);
  const processed = await waitForDocument(stack, account, knowledgebase.id, document.body.data.id);
  if (processed.status !== 'active') throw new Error(`The FAQ document ended ${processed.status}`);
  return knowledgebase.id;
}

/** `check_order`: looks an order up at `origin`/orders, with a secret header and the company as a static field. */
export function orderToolRequest(origin: string, secret: string): Record<string, unknown> {
  return {
    name: 'check_order',
    description: 'Looks an order up by its number',
    endpoint: `${origin}/orders`,
    method: 'POST',
    headers: [{ name: 'X-Api-Key', value: secret }],
    static_fields: [{ key: 'company', value: '{{company}}' }],
    schema: [
      { name: 'order_id', type: 'string', description: 'The order number', required: true },
      { name: 'quantity', type: 'integer', description: 'How many' },
    ],
  };
}

/** An outbound assistant whose first message names the lead's variables over its own ({{name}}, {{plan}}). */
export function renewalsAssistantRequest(
  languageId: number,
  phoneNumberId: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name: 'Renewals',
    type: 'outbound',
    language_id: languageId,
    phone_number_id: phoneNumberId,
    initial_message: 'Hi {{name}}, this is {{company}} about your {{plan}} plan.',
    variables: { company: 'Acme', plan: 'basic', name: 'there' },
    ...overrides,
  };
}

/** What the dialer asked the (local) provider to place for a campaign, once it has placed `count` calls. */
export function campaignDials(
  stack: Stack,
  campaignId: number,
  count: number,
): Promise<{ attemptId: string; to: string; metadata: Record<string, unknown> }[]> {
  return waitFor(async () => {
    const rows: { request: { attemptId: string; to: string; metadata: Record<string, unknown> } }[] =
      await stack.dataSource.query(
        `SELECT d.request FROM local_dial_requests d JOIN calls c ON c.external_id = d.attempt_id
          WHERE c.campaign_id = $1`,
        [campaignId],
      );
    return rows.length >= count ? rows.map((row) => row.request) : undefined;
  });
}
