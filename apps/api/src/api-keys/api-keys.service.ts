import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  ApiKeyListResponse,
  CreateApiKeyRequest,
  CreateApiKeyResponse,
  Errors,
  MessageResponse,
  toApiKeyResponse,
  toCreatedApiKey,
} from '@app/contracts';
import { ApiKey, InjectTenantRepository, TenantRepository, Transactions } from '@app/database';
import { generateToken, hashToken } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

@Injectable()
export class ApiKeysService implements OnModuleInit {
  constructor(
    @InjectTenantRepository(ApiKey) private readonly apiKeys: TenantRepository<ApiKey>,
    private readonly transactions: Transactions,
    private readonly creates: IdempotentCreates,
  ) {}

  /** The token is shown in the create's answer only, so the recovery has it from the record (sealed there). */
  onModuleInit(): void {
    this.creates.recoverWith('api-key', async (user, id, token) => {
      const key = await this.apiKeys.findOne(user.id, id);
      if (!key || token === undefined) throw Errors.apiKeyNotFound();
      return this.created(key, token);
    });
  }

  async create(user: AuthenticatedUser, request: CreateApiKeyRequest): Promise<CreateApiKeyResponse> {
    const token = generateToken('apiKey');
    const key = await this.transactions.run(async (transaction) => {
      const created = await this.apiKeys.within(transaction).create(user.id, {
        name: request.name,
        tokenHash: hashToken(token),
        lastUsedAt: null,
      });
      await this.creates.record(transaction, 'api-key', created.id, token);
      return created;
    });
    return this.created(key, token);
  }

  private created(key: ApiKey, token: string): CreateApiKeyResponse {
    return { message: 'API key created successfully.', api_key: toCreatedApiKey(key, token) };
  }

  async list(user: AuthenticatedUser): Promise<ApiKeyListResponse> {
    const keys = await this.apiKeys.findAllNewestFirst(user.id);
    return { api_keys: keys.map(toApiKeyResponse) };
  }

  /** Takes effect on the very next request: tokens are looked up on every request, never cached. */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.apiKeys.delete(user.id, id))) throw Errors.apiKeyNotFound();
    return { message: 'API key deleted successfully.' };
  }
}
