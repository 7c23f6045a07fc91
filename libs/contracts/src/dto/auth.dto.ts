import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';
import { UserResponse } from './user.dto';

/** The examples of register and login name one account, so "Try it out" on both, in turn, signs in. */
const EXAMPLE_PASSWORD = 'correct horse battery staple';

export class RegisterRequest {
  @ApiProperty({ maxLength: 255, example: 'Ada Lovelace' })
  @Rule.RequiredText()
  name: string;

  @ApiProperty({ maxLength: 255, format: 'email' })
  @Rule.Required()
  @Rule.String()
  @Rule.Email()
  @Rule.MaxChars(255)
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 255, example: EXAMPLE_PASSWORD })
  @Rule.Required()
  @Rule.String()
  @Rule.MinChars(8)
  @Rule.MaxChars(255)
  password: string;
}

export class LoginRequest {
  @ApiProperty({ format: 'email' })
  @Rule.RequiredText()
  email: string;

  @ApiProperty({ example: EXAMPLE_PASSWORD })
  @Rule.RequiredText()
  password: string;

  @ApiPropertyOptional({ maxLength: 255, description: 'A label for the session token' })
  @Rule.OptionalText()
  token_name?: string;
}

export class RegisterResponse {
  @ApiProperty({ example: 'Registered successfully.' }) message: string;
  @ApiProperty({ type: UserResponse }) user: UserResponse;
  @ApiProperty({ description: 'Session token; send as `Authorization: Bearer <token>`' }) token: string;
}

export class LoginResponse extends RegisterResponse {
  @ApiProperty({ example: 'auth_token' }) token_name: string;
}

export class MessageResponse {
  @ApiProperty() message: string;
}

export class ErrorFieldResponse {
  @ApiProperty() error: string;
}

/** Laravel's validation shape: the first message (and how many more), then every message by field path. */
export class ValidationErrorResponse {
  @ApiProperty({ example: 'The name field is required. (and 1 more error)' }) message: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { name: ['The name field is required.'], 'schema.0.type': ['The selected schema.0.type is invalid.'] },
  })
  errors: Record<string, string[]>;
}
