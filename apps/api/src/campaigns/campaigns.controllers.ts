import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Put, Query, Req } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Request } from 'express';
import {
  ApiLengthAwarePage,
  CampaignEnvelope,
  CampaignMessageEnvelope,
  CampaignResponse,
  CampaignStatusRequest,
  CampaignStatusResponse,
  CreateCampaignRequest,
  CreateLeadRequest,
  Errors,
  ImportLeadsRequest,
  LeadEnvelope,
  LeadImportAcceptedResponse,
  LeadImportEnvelope,
  LeadListQuery,
  LeadMessageEnvelope,
  LeadResponse,
  LengthAwarePage,
  MessageResponse,
  PageQuery,
  UpdateCampaignRequest,
  UpdateLeadRequest,
} from '@app/contracts';
import {
  ApiBodyPerMediaType,
  ApiNotFoundAs,
  ApiUserResource,
  ApiValidatedInput,
  ApiValidatedQuery,
  ResourceIdPipe,
} from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { FileUpload } from '../http/file-upload.interceptor';
import { CampaignsService } from './campaigns.service';
import { LeadImportsService } from './lead-imports.service';
import { LeadsService } from './leads.service';
import { UserPost } from '../idempotency/user-post.decorator';

const CampaignId = () => Param('id', new ResourceIdPipe(Errors.campaignNotFound));
const ImportId = () => Param('importId', new ResourceIdPipe(Errors.leadImportNotFound));
const LeadId = () => Param('id', new ResourceIdPipe(Errors.leadNotFound));
const ApiCampaignNotFound = () => ApiNotFoundAs('message', 'Campaign not found.');

@ApiUserResource('Campaigns')
@Controller('user')
export class CampaignsController {
  constructor(
    private readonly campaigns: CampaignsService,
    private readonly imports: LeadImportsService,
  ) {}

  @Get('campaigns')
  @ApiOperation({ operationId: 'listCampaigns', summary: 'List campaigns, newest first' })
  @ApiLengthAwarePage(CampaignResponse)
  @ApiValidatedQuery()
  list(
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: PageQuery,
    @Req() request: Request,
  ): Promise<LengthAwarePage<CampaignResponse>> {
    return this.campaigns.list(user, query, request);
  }

  @UserPost('campaign')
  @ApiOperation({ operationId: 'createCampaign', summary: 'Create a campaign (status draft)' })
  @ApiCreatedResponse({ type: CampaignMessageEnvelope })
  @ApiValidatedInput()
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateCampaignRequest,
  ): Promise<CampaignMessageEnvelope> {
    return this.campaigns.create(user, body);
  }

  @Get('campaign/:id')
  @ApiOperation({ operationId: 'getCampaign', summary: 'Read a campaign' })
  @ApiOkResponse({ type: CampaignEnvelope })
  @ApiCampaignNotFound()
  get(@CurrentUser() user: AuthenticatedUser, @CampaignId() id: number): Promise<CampaignEnvelope> {
    return this.campaigns.get(user, id);
  }

  @Put('campaign/:id')
  @ApiOperation({ operationId: 'updateCampaign', summary: 'Update a campaign (partial)' })
  @ApiOkResponse({ type: CampaignMessageEnvelope })
  @ApiValidatedInput()
  @ApiCampaignNotFound()
  update(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @Body() body: UpdateCampaignRequest,
  ): Promise<CampaignMessageEnvelope> {
    return this.campaigns.update(user, id, body);
  }

  @Delete('campaign/:id')
  @ApiOperation({ operationId: 'deleteCampaign', summary: 'Delete a campaign and its leads' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiCampaignNotFound()
  delete(@CurrentUser() user: AuthenticatedUser, @CampaignId() id: number): Promise<MessageResponse> {
    return this.campaigns.delete(user, id);
  }

  @UserPost('campaigns/update-status')
  @HttpCode(200)
  @ApiOperation({ operationId: 'updateCampaignStatus', summary: 'Start or stop a campaign' })
  @ApiOkResponse({ type: CampaignStatusResponse })
  @ApiValidatedInput('Invalid input, or the campaign cannot be started or stopped now (on `campaign_id`)')
  @ApiCampaignNotFound()
  updateStatus(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CampaignStatusRequest,
  ): Promise<CampaignStatusResponse> {
    return this.campaigns.updateStatus(user, body);
  }

  @UserPost('campaign/:id/leads/import')
  @HttpCode(202)
  @FileUpload()
  @ApiOperation({
    operationId: 'importLeads',
    summary: 'Import leads from a CSV file (multipart `file`), on the worker',
  })
  @ApiBodyPerMediaType({ 'multipart/form-data': ImportLeadsRequest })
  @ApiAcceptedResponse({ type: LeadImportAcceptedResponse })
  @ApiValidatedInput()
  @ApiCampaignNotFound()
  importLeads(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @Body() body: ImportLeadsRequest,
  ): Promise<LeadImportAcceptedResponse> {
    return this.imports.start(user, id, body);
  }

  @Get('campaign/:id/leads/imports/:importId')
  @ApiOperation({ operationId: 'getLeadImport', summary: 'Progress of a lead import and its first errors' })
  @ApiOkResponse({ type: LeadImportEnvelope })
  @ApiNotFoundAs('message', 'Lead import not found.')
  importProgress(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @ImportId() importId: number,
  ): Promise<LeadImportEnvelope> {
    return this.imports.progress(user, id, importId);
  }

  @Get('campaign/:id/leads/imports/:importId/errors.csv')
  @Header('Content-Type', 'text/csv; charset=utf-8')
  @ApiOperation({ operationId: 'downloadLeadImportErrors', summary: 'Every row error of a lead import, as CSV' })
  @ApiOkResponse({ description: 'row,column,message', content: { 'text/csv': { schema: { type: 'string' } } } })
  @ApiNotFoundAs('message', 'Lead import not found.')
  importErrors(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @ImportId() importId: number,
  ): Promise<string> {
    return this.imports.errorsCsv(user, id, importId);
  }
}

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
