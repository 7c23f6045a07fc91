export type { components, operations, paths } from './generated/api.js';
export { ApiError, type Answer, unwrap } from './answers.js';
export {
  type ClientOptions,
  createClient,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  idempotencyKey,
  RequestTimeoutError,
  serializeBody,
  type VoiceAssistantClient,
} from './client.js';
export { items, type LengthAwarePage, pages, type SlimPage } from './pagination.js';
export {
  type CallWebhookEvent,
  verifyWebhook,
  type WebhookCall,
  type WebhookCallEvent,
  WebhookVerificationError,
} from './webhooks.js';
