import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyListResponse, CreateApiKeyRequest, CreateApiKeyResponse, Errors, MessageResponse } from '@app/contracts';
import { ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { ApiKeysService } from './api-keys.service';

@ApiTags('API keys')
@ApiBearerAuth()
@Controller('user/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @ApiCreatedResponse({ type: CreateApiKeyResponse })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateApiKeyRequest): Promise<CreateApiKeyResponse> {
    return this.apiKeys.create(user, body);
  }

  @Get()
  @ApiOkResponse({ type: ApiKeyListResponse })
  list(@CurrentUser() user: AuthenticatedUser): Promise<ApiKeyListResponse> {
    return this.apiKeys.list(user);
  }

  @Delete(':id')
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundResponse({ type: MessageResponse })
  delete(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id', new ResourceIdPipe(Errors.apiKeyNotFound)) id: number,
  ): Promise<MessageResponse> {
    return this.apiKeys.delete(user, id);
  }
}
