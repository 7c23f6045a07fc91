import { ApiProperty } from '@nestjs/swagger';

export class UserResponse {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'Ada Lovelace' }) name: string;
  @ApiProperty({ example: 'ada@example.com' }) email: string;
}

export class UserEnvelope {
  @ApiProperty({ type: UserResponse }) data: UserResponse;
}

export function toUserResponse(user: { id: number; name: string; email: string }): UserResponse {
  return { id: user.id, name: user.name, email: user.email };
}
