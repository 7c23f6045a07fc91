/** The associated data each kind of sealed secret is bound to, so a value cannot be moved to another row. */
export const SecretContexts = {
  toolHeader: (toolId: number) => `tool:${toolId}:header`,
  sipPassword: (trunkId: number) => `sip-trunk:${trunkId}:password`,
  webhookSecret: (assistantId: number) => `assistant:${assistantId}:webhook-secret`,
  /** The secret that signs a phone number's ring-time hook requests, and the account's default hook's. */
  phoneNumberServerSecret: (phoneNumberId: number) => `phone-number:${phoneNumberId}:server-secret`,
  accountServerSecret: (userId: number) => `user:${userId}:server-secret`,
  idempotentAnswer: (userId: number, key: string) => `idempotency:${userId}:${key}`,
  idempotentCreate: (userId: number, key: string) => `idempotency:${userId}:${key}:created`,
};
