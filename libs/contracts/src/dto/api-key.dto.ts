import { ApiProperty } from '@nestjs/swagger';
import { Rule } from '../validation';

export class CreateApiKeyRequest {
  @ApiProperty({ maxLength: 255, example: 'CRM integration' })
  @Rule.RequiredText()
  name: string;
}

export class CreatedApiKey {
  @ApiProperty({ type: 'integer', description: 'What `DELETE /user/api-keys/{id}` takes' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Shown only in this response; store it now' }) token: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class CreateApiKeyResponse {
  @ApiProperty({ example: 'API key created successfully.' }) message: string;
  @ApiProperty({ type: CreatedApiKey }) api_key: CreatedApiKey;
}

export class ApiKeyResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class ApiKeyListResponse {
  @ApiProperty({ type: [ApiKeyResponse] }) api_keys: ApiKeyResponse[];
}

interface ApiKeyLike {
  id: number;
  name: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

export function toApiKeyResponse(key: ApiKeyLike): ApiKeyResponse {
  return {
    id: key.id,
    name: key.name,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
  };
}

export function toCreatedApiKey(key: ApiKeyLike, token: string): CreatedApiKey {
  return { id: key.id, name: key.name, token, created_at: key.createdAt.toISOString() };
}
