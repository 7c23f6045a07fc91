import { Module } from '@nestjs/common';
import { CampaignStatusController } from './campaign-status.controller';
import { CampaignsController } from './campaigns.controller';
import { LeadsController } from './leads.controller';
import { CampaignsService } from './campaigns.service';
import { LeadImportsService } from './lead-imports.service';
import { LeadsService } from './leads.service';

@Module({
  controllers: [CampaignsController, LeadsController, CampaignStatusController],
  providers: [CampaignsService, LeadsService, LeadImportsService],
})
export class CampaignsModule {}
