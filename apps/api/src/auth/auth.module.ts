import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SessionToken, User } from '@app/database';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { LoginThrottle } from './login-throttle.service';
import { TokenAuthenticator } from './token-authenticator.service';

@Module({
  imports: [TypeOrmModule.forFeature([User, SessionToken])],
  controllers: [AuthController],
  providers: [AuthService, LoginThrottle, TokenAuthenticator],
  exports: [TokenAuthenticator],
})
export class AuthModule {}
