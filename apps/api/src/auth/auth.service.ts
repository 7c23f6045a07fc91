import { Injectable } from '@nestjs/common';
import * as argon2 from 'argon2';
import { QueryFailedError } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  Errors,
  LoginRequest,
  LoginResponse,
  RegisterRequest,
  RegisterResponse,
  ValidationFailed,
  toUserResponse,
} from '@app/contracts';
import { CredentialsRepository, type User, UsersRepository } from '@app/database';
import { generateToken, hashToken } from '@app/platform';
import type { AuthContext } from './auth-context';
import { LoginThrottle } from './login-throttle.service';

const DEFAULT_TOKEN_NAME = 'auth_token';
const UNIQUE_VIOLATION = '23505';

/**
 * A hash of a random password, verified against when the email is unknown, so a login takes as long
 * whether or not the account exists.
 */
let decoyHash: Promise<string> | undefined;

@Injectable()
export class AuthService {
  constructor(
    private readonly config: AppConfig,
    private readonly throttle: LoginThrottle,
    private readonly users: UsersRepository,
    private readonly credentials: CredentialsRepository,
  ) {}

  async register(request: RegisterRequest): Promise<RegisterResponse> {
    if (!this.config.registrationEnabled) throw Errors.registrationClosed();
    const email = request.email.trim().toLowerCase();
    const taken = () => ValidationFailed.field('email', 'The email has already been taken.');
    if (await this.users.emailTaken(email)) throw taken();

    const passwordHash = await argon2.hash(request.password, { type: argon2.argon2id });
    let user: User;
    try {
      user = await this.users.create({ name: request.name, email, passwordHash });
    } catch (error) {
      // Two registrations racing for one email: the unique index decides.
      if (error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION) {
        throw taken();
      }
      throw error;
    }
    const token = await this.startSession(user.id, DEFAULT_TOKEN_NAME);
    return { message: 'Registered successfully.', user: toUserResponse(user), token };
  }

  async login(request: LoginRequest, clientAddress: string): Promise<LoginResponse> {
    const email = request.email.trim().toLowerCase();
    await this.throttle.admit(email, clientAddress);

    const user = await this.users.withPasswordHash(email);
    const valid = user
      ? await argon2.verify(user.passwordHash, request.password)
      : await argon2.verify(await (decoyHash ??= argon2.hash(generateToken('session'))), request.password);
    if (!user || !valid) throw ValidationFailed.field('email', 'These credentials do not match our records.');
    await this.throttle.clear(email, clientAddress);

    const tokenName = request.token_name ?? DEFAULT_TOKEN_NAME;
    const token = await this.startSession(user.id, tokenName);
    return { message: 'Logged in successfully.', user: toUserResponse(user), token, token_name: tokenName };
  }

  /** Ends the session whose token made this request; an API key has no session to end and stays valid. */
  async logout(auth: AuthContext): Promise<{ message: string }> {
    if (auth.tokenKind === 'session') {
      await this.credentials.endSession(auth.user.id, auth.tokenId);
    }
    return { message: 'Logged out successfully.' };
  }

  private async startSession(userId: number, name: string): Promise<string> {
    const token = generateToken('session');
    const expiresAt = new Date(Date.now() + this.config.sessionTtlSeconds * 1000);
    await this.credentials.startSession(userId, name, hashToken(token), expiresAt);
    return token;
  }
}
