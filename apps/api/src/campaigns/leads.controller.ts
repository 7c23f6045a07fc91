import { Body, Controller, Delete, Get, Param, Patch, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Request } from 'express';
import {
  ApiLengthAwarePage,
  CreateLeadRequest,
  Errors,
  LeadEnvelope,
  LeadListQuery,
  LeadMessageEnvelope,
  LeadResponse,
  LengthAwarePage,
  MessageResponse,
  UpdateLeadRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ApiValidatedQuery, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { LeadsService } from './leads.service';
import { UserPost } from '../idempotency/user-post.decorator';

const LeadId = () => Param('id', new ResourceIdPipe(Errors.leadNotFound));

@ApiUserResource('Leads')
@Controller('user')
export class LeadsController {
  constructor(private readonly leads: LeadsService) {}

  @Get('leads')
  @ApiOperation({ operationId: 'listLeads', summary: 'List leads, newest first, with filters' })
  @ApiLengthAwarePage(LeadResponse)
  @ApiValidatedQuery()
  list(
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: LeadListQuery,
    @Req() request: Request,
  ): Promise<LengthAwarePage<LeadResponse>> {
    return this.leads.list(user, query, request);
  }

  @UserPost('lead')
  @ApiOperation({ operationId: 'createLead', summary: 'Add a lead to a campaign' })
  @ApiCreatedResponse({ type: LeadMessageEnvelope })
  @ApiValidatedInput()
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateLeadRequest): Promise<LeadMessageEnvelope> {
    return this.leads.create(user, body);
  }

  @Get('leads/:id')
  @ApiOperation({ operationId: 'getLead', summary: 'Read a lead' })
  @ApiOkResponse({ type: LeadEnvelope })
  @ApiNotFoundAs('message', 'Lead not found.')
  get(@CurrentUser() user: AuthenticatedUser, @LeadId() id: number): Promise<LeadEnvelope> {
    return this.leads.get(user, id);
  }

  @Patch('leads/:id')
  @ApiOperation({
    operationId: 'updateLead',
    summary: 'Change a lead’s number, variables or secondary contacts, or blacklist it',
  })
  @ApiOkResponse({ type: LeadMessageEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('message', 'Lead not found.')
  update(
    @CurrentUser() user: AuthenticatedUser,
    @LeadId() id: number,
    @Body() body: UpdateLeadRequest,
  ): Promise<LeadMessageEnvelope> {
    return this.leads.update(user, id, body);
  }

  @Delete('leads/:id')
  @ApiOperation({ operationId: 'deleteLead', summary: 'Delete a lead' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'Lead not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @LeadId() id: number): Promise<MessageResponse> {
    return this.leads.delete(user, id);
  }
}
