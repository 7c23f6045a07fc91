import { Body, Controller, Delete, Get, Param } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiKeyListResponse, CreateApiKeyRequest, CreateApiKeyResponse, Errors, MessageResponse } from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { ApiKeysService } from './api-keys.service';
import { UserPost } from '../idempotency/user-post.decorator';

@ApiUserResource('API keys')
@Controller('user/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @UserPost()
  @ApiOperation({ operationId: 'createApiKey', summary: 'Create an API key; its token is shown only in this answer' })
  @ApiCreatedResponse({ type: CreateApiKeyResponse })
  @ApiValidatedInput()
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateApiKeyRequest): Promise<CreateApiKeyResponse> {
    return this.apiKeys.create(user, body);
  }

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: 'List the API keys of the account (never their tokens)' })
  @ApiOkResponse({ type: ApiKeyListResponse })
  list(@CurrentUser() user: AuthenticatedUser): Promise<ApiKeyListResponse> {
    return this.apiKeys.list(user);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteApiKey', summary: 'Delete an API key; it stops working at once' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'API key not found.')
  delete(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id', new ResourceIdPipe(Errors.apiKeyNotFound)) id: number,
  ): Promise<MessageResponse> {
    return this.apiKeys.delete(user, id);
  }
}
