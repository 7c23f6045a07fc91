import { Controller, Delete, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { Errors, MessageResponse, PhoneNumberListResponse } from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { PhoneNumbersService } from './phone-numbers.service';

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

  @Delete(':id')
  @ApiOperation({
    operationId: 'deletePhoneNumber',
    summary: 'Release a number; a SIP trunk also loses its provider trunks',
  })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('error', 'Phone number not found.')
  delete(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id', new ResourceIdPipe(Errors.phoneNumberNotFound)) id: number,
  ): Promise<MessageResponse> {
    return this.numbers.delete(user, id);
  }
}
