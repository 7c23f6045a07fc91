import { Injectable } from '@nestjs/common';
import {
  ApiKeyListResponse,
  CreateApiKeyRequest,
  CreateApiKeyResponse,
  Errors,
  MessageResponse,
  toApiKeyResponse,
  toCreatedApiKey,
} from '@app/contracts';
import { ApiKey, InjectTenantRepository, TenantRepository } from '@app/database';
import { generateToken, hashToken } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';

@Injectable()
export class ApiKeysService {
  constructor(@InjectTenantRepository(ApiKey) private readonly apiKeys: TenantRepository<ApiKey>) {}

  async create(user: AuthenticatedUser, request: CreateApiKeyRequest): Promise<CreateApiKeyResponse> {
    const token = generateToken('apiKey');
    const key = await this.apiKeys.create(user.id, {
      name: request.name,
      tokenHash: hashToken(token),
      lastUsedAt: null,
    });
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
