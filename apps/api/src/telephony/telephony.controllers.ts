import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { ApiBadGatewayResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import {
  CreateSipTrunkRequest,
  ErrorFieldResponse,
  Errors,
  MessageResponse,
  PhoneNumberListResponse,
  SIP_TRUNK_CREATE_FAILED,
  SIP_TRUNK_UPDATE_FAILED,
  SipTrunkEnvelope,
  SipTrunkListResponse,
  SipTrunkMessageEnvelope,
  UpdateSipTrunkRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUnavailableAs, ApiUserResource, ApiValidatedInput, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { PhoneNumbersService } from './phone-numbers.service';
import { SipTrunksService } from './sip-trunks.service';
import { UserPost } from '../idempotency/user-post.decorator';

const TrunkId = () => Param('id', new ResourceIdPipe(Errors.sipTrunkNotFound));

@ApiUserResource('Telephony')
@Controller('user/phone-numbers/sip-trunks')
export class SipTrunksController {
  constructor(private readonly trunks: SipTrunksService) {}

  @Get()
  @ApiOperation({ operationId: 'listSipTrunks', summary: 'List the SIP trunks of the account' })
  @ApiOkResponse({ type: SipTrunkListResponse })
  list(@CurrentUser() user: AuthenticatedUser): Promise<SipTrunkListResponse> {
    return this.trunks.list(user);
  }

  @UserPost()
  @ApiOperation({
    operationId: 'createSipTrunk',
    summary: 'Connect your own telephony: provisions an inbound and an outbound trunk before answering',
  })
  @ApiCreatedResponse({ type: SipTrunkMessageEnvelope })
  @ApiValidatedInput()
  @ApiBadGatewayResponse({ type: ErrorFieldResponse, description: SIP_TRUNK_CREATE_FAILED })
  @ApiUnavailableAs(SIP_TRUNK_CREATE_FAILED)
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateSipTrunkRequest,
  ): Promise<SipTrunkMessageEnvelope> {
    return this.trunks.create(user, body);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getSipTrunk', summary: 'Read a SIP trunk (never its password)' })
  @ApiOkResponse({ type: SipTrunkEnvelope })
  @ApiNotFoundAs('error', 'SIP trunk not found.')
  get(@CurrentUser() user: AuthenticatedUser, @TrunkId() id: number): Promise<SipTrunkEnvelope> {
    return this.trunks.get(user, id);
  }

  @Put(':id')
  @ApiOperation({
    operationId: 'updateSipTrunk',
    summary: 'Update any subset of fields; the trunks the change affects are re-created, new before old go',
  })
  @ApiOkResponse({ type: SipTrunkMessageEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('error', 'SIP trunk not found.')
  @ApiBadGatewayResponse({ type: ErrorFieldResponse, description: SIP_TRUNK_UPDATE_FAILED })
  @ApiUnavailableAs(SIP_TRUNK_UPDATE_FAILED)
  update(
    @CurrentUser() user: AuthenticatedUser,
    @TrunkId() id: number,
    @Body() body: UpdateSipTrunkRequest,
  ): Promise<SipTrunkMessageEnvelope> {
    return this.trunks.update(user, id, body);
  }
}

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
