import { Body, Controller, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CampaignStatusRequest, CampaignStatusResponse } from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { UserPost } from '../idempotency/user-post.decorator';
import { CampaignsService } from './campaigns.service';

/**
 * Starting a campaign needs its leads: the route is listed after the leads' (LeadsController), so the OpenAPI
 * document offers "Try it out" on a campaign, then its leads, then its start.
 */
@ApiUserResource('Campaigns')
@Controller('user')
export class CampaignStatusController {
  constructor(private readonly campaigns: CampaignsService) {}

  @UserPost('campaigns/update-status')
  @HttpCode(200)
  @ApiOperation({ operationId: 'updateCampaignStatus', summary: 'Start or stop a campaign' })
  @ApiOkResponse({ type: CampaignStatusResponse })
  @ApiValidatedInput('Invalid input, or the campaign cannot be started or stopped now (on `campaign_id`)')
  @ApiNotFoundAs('message', 'Campaign not found.')
  updateStatus(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CampaignStatusRequest,
  ): Promise<CampaignStatusResponse> {
    return this.campaigns.updateStatus(user, body);
  }
}
