import { Module } from '@nestjs/common';
import { CredentialsRepository, UsersRepository } from '@app/database';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { LoginThrottle } from './login-throttle.service';
import { TokenAuthenticator } from './token-authenticator.service';

@Module({
  controllers: [AuthController],
  providers: [AuthService, LoginThrottle, TokenAuthenticator, CredentialsRepository, UsersRepository],
  exports: [TokenAuthenticator],
})
export class AuthModule {}
