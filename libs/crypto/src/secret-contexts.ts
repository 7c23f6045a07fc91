/** The associated data each kind of sealed secret is bound to, so a value cannot be moved to another row. */
export const SecretContexts = {
  toolHeader: (toolId: number) => `tool:${toolId}:header`,
  sipPassword: (trunkId: number) => `sip-trunk:${trunkId}:password`,
  webhookSecret: (assistantId: number) => `assistant:${assistantId}:webhook-secret`,
  idempotentAnswer: (userId: number, key: string) => `idempotency:${userId}:${key}`,
  idempotentCreate: (userId: number, key: string) => `idempotency:${userId}:${key}:created`,
};
