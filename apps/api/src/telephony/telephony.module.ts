import { Module } from '@nestjs/common';
import { PhoneNumber, tenantRepositoryProvider } from '@app/database';
import { PhoneNumbersService } from './phone-numbers.service';
import { SipTrunksService } from './sip-trunks.service';
import { PhoneNumbersController } from './phone-numbers.controller';
import { SipTrunksController } from './sip-trunks.controller';

@Module({
  // The trunk routes come first so `/user/phone-numbers/sip-trunks` is never taken for a number's id.
  controllers: [SipTrunksController, PhoneNumbersController],
  providers: [SipTrunksService, PhoneNumbersService, tenantRepositoryProvider(PhoneNumber)],
})
export class TelephonyModule {}
