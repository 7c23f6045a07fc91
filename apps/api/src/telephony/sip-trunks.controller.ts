import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiBadGatewayResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import {
  CreateSipTrunkRequest,
  ErrorFieldResponse,
  Errors,
  SIP_TRUNK_CREATE_FAILED,
  SIP_TRUNK_UPDATE_FAILED,
  SipTrunkEnvelope,
  SipTrunkListResponse,
  SipTrunkMessageEnvelope,
  UpdateSipTrunkRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUnavailableAs, ApiUserResource, ApiValidatedInput, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
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
