import { Module } from '@nestjs/common';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { LoginThrottle } from './login-throttle.service';
import { TokenAuthenticator } from './token-authenticator.service';

@Module({
  controllers: [AuthController],
  providers: [AuthService, LoginThrottle, TokenAuthenticator],
  exports: [TokenAuthenticator],
})
export class AuthModule {}
