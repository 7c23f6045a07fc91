import { Body, Controller, Get, HttpCode, Ip } from '@nestjs/common';
import { ApiCreatedResponse, ApiForbiddenResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import {
  LoginRequest,
  LoginResponse,
  MessageResponse,
  RegisterRequest,
  RegisterResponse,
  UserEnvelope,
  toUserResponse,
} from '@app/contracts';
import { ApiPublicResource, ApiUserResource, ApiValidatedInput, Public } from '@app/platform';
import { AuthContext, AuthenticatedUser, CurrentAuth, CurrentUser } from './auth-context';
import { AuthService } from './auth.service';
import { UserPost } from '../idempotency/user-post.decorator';

@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @UserPost('auth/register')
  @ApiPublicResource('Authentication')
  @ApiOperation({ operationId: 'register', summary: 'Create an account and get a session token' })
  @ApiCreatedResponse({ type: RegisterResponse })
  @ApiValidatedInput()
  @ApiForbiddenResponse({ type: MessageResponse, description: 'Registration is disabled.' })
  register(@Body() body: RegisterRequest): Promise<RegisterResponse> {
    return this.auth.register(body);
  }

  @Public()
  @UserPost('auth/login')
  @HttpCode(200)
  @ApiPublicResource('Authentication')
  @ApiOperation({ operationId: 'login', summary: 'Get a session token for an email and password' })
  @ApiOkResponse({ type: LoginResponse })
  @ApiValidatedInput('Invalid input, or the credentials do not match (on `email`)')
  login(@Body() body: LoginRequest, @Ip() ip: string): Promise<LoginResponse> {
    return this.auth.login(body, ip);
  }

  @UserPost('auth/logout')
  @HttpCode(200)
  @ApiUserResource('Authentication')
  @ApiOperation({ operationId: 'logout', summary: 'End the session whose token made the request' })
  @ApiOkResponse({ type: MessageResponse })
  logout(@CurrentAuth() auth: AuthContext): Promise<MessageResponse> {
    return this.auth.logout(auth);
  }

  @Get('user/me')
  @ApiUserResource('Authentication')
  @ApiOperation({ operationId: 'getCurrentUser', summary: 'The authenticated account' })
  @ApiOkResponse({ type: UserEnvelope })
  me(@CurrentUser() user: AuthenticatedUser): UserEnvelope {
    return { data: toUserResponse(user) };
  }
}
