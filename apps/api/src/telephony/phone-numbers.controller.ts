import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import {
  Errors,
  MessageResponse,
  PhoneNumberListResponse,
  PhoneNumberMessageEnvelope,
  UpdatePhoneNumberRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { UserPost } from '../idempotency/user-post.decorator';
import { PhoneNumbersService } from './phone-numbers.service';

const PhoneNumberId = () => Param('id', new ResourceIdPipe(Errors.phoneNumberNotFound));

@ApiUserResource('Telephony')
@Controller('user/phone-numbers')
export class PhoneNumbersController {
  constructor(private readonly numbers: PhoneNumbersService) {}

  @Get()
  @ApiOperation({
    operationId: 'listSmsPhoneNumbers',
    summary: 'Legacy: SMS-capable numbers with an active subscription',
  })
  @ApiOkResponse({ type: PhoneNumberListResponse })
  legacy(@CurrentUser() user: AuthenticatedUser): Promise<PhoneNumberListResponse> {
    return this.numbers.legacy(user);
  }

  @Get('all')
  @ApiOperation({ operationId: 'listPhoneNumbers', summary: 'Every number of the account, SIP trunks included' })
  @ApiOkResponse({ type: PhoneNumberListResponse })
  all(@CurrentUser() user: AuthenticatedUser): Promise<PhoneNumberListResponse> {
    return this.numbers.all(user);
  }

  @Put(':id')
  @ApiOperation({
    operationId: 'updatePhoneNumber',
    summary: 'Set the number’s ring-time hook (`server_url`, `server_timeout_ms`), over the account’s default',
  })
  @ApiOkResponse({ type: PhoneNumberMessageEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('error', 'Phone number not found.')
  update(
    @CurrentUser() user: AuthenticatedUser,
    @PhoneNumberId() id: number,
    @Body() body: UpdatePhoneNumberRequest,
  ): Promise<PhoneNumberMessageEnvelope> {
    return this.numbers.update(user, id, body);
  }

  // Not `{id}/server-secret`: that path would read as `sip-trunks/{id}` too.
  @UserPost('server-secret/:id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotatePhoneNumberServerSecret',
    summary: 'Replace the secret that signs the number’s ring-time hook requests',
  })
  @ApiOkResponse({ type: PhoneNumberMessageEnvelope })
  @ApiNotFoundAs('error', 'Phone number not found.')
  rotateServerSecret(
    @CurrentUser() user: AuthenticatedUser,
    @PhoneNumberId() id: number,
  ): Promise<PhoneNumberMessageEnvelope> {
    return this.numbers.rotateServerSecret(user, id);
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deletePhoneNumber',
    summary: 'Release a number; a SIP trunk also loses its provider trunks',
  })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('error', 'Phone number not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @PhoneNumberId() id: number): Promise<MessageResponse> {
    return this.numbers.delete(user, id);
  }
}
