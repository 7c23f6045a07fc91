import { Body, Controller, Get, HttpCode, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { SettingsEnvelope, SettingsMessageEnvelope, UpdateSettingsRequest } from '@app/contracts';
import { ApiUserResource, ApiValidatedInput } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { UserPost } from '../idempotency/user-post.decorator';
import { SettingsService } from './settings.service';

@ApiUserResource('Settings')
@Controller('user/settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @ApiOperation({ operationId: 'getSettings', summary: 'The account’s settings: its default ring-time hook' })
  @ApiOkResponse({ type: SettingsEnvelope })
  get(@CurrentUser() user: AuthenticatedUser): Promise<SettingsEnvelope> {
    return this.settings.get(user);
  }

  @Put()
  @ApiOperation({
    operationId: 'updateSettings',
    summary: 'Set the account’s default ring-time hook, for numbers that name no `server_url` of their own',
  })
  @ApiOkResponse({ type: SettingsMessageEnvelope })
  @ApiValidatedInput()
  update(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: UpdateSettingsRequest,
  ): Promise<SettingsMessageEnvelope> {
    return this.settings.update(user, body);
  }

  @UserPost('server-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateSettingsServerSecret',
    summary: 'Replace the secret that signs the account’s default ring-time hook requests',
  })
  @ApiOkResponse({ type: SettingsMessageEnvelope })
  rotateServerSecret(@CurrentUser() user: AuthenticatedUser): Promise<SettingsMessageEnvelope> {
    return this.settings.rotateServerSecret(user);
  }
}
