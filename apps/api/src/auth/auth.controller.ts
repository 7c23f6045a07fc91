import { Body, Controller, Get, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  LoginRequest,
  LoginResponse,
  MessageResponse,
  RegisterRequest,
  RegisterResponse,
  UserEnvelope,
  toUserResponse,
} from '@app/contracts';
import { Public } from '@app/platform';
import { AuthContext, AuthenticatedUser, CurrentAuth, CurrentUser } from './auth-context';
import { AuthService } from './auth.service';

@ApiTags('Authentication')
@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('auth/register')
  @ApiCreatedResponse({ type: RegisterResponse })
  register(@Body() body: RegisterRequest): Promise<RegisterResponse> {
    return this.auth.register(body);
  }

  @Public()
  @Post('auth/login')
  @HttpCode(200)
  @ApiOkResponse({ type: LoginResponse })
  login(@Body() body: LoginRequest, @Ip() ip: string): Promise<LoginResponse> {
    return this.auth.login(body, ip);
  }

  @Post('auth/logout')
  @HttpCode(200)
  @ApiBearerAuth()
  @ApiOkResponse({ type: MessageResponse })
  logout(@CurrentAuth() auth: AuthContext): Promise<MessageResponse> {
    return this.auth.logout(auth);
  }

  @Get('user/me')
  @ApiBearerAuth()
  @ApiOkResponse({ type: UserEnvelope })
  me(@CurrentUser() user: AuthenticatedUser): UserEnvelope {
    return { data: toUserResponse(user) };
  }
}
