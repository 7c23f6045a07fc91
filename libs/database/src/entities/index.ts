import { ApiKey } from './api-key.entity';
import { Language } from './language.entity';
import { SessionToken } from './session-token.entity';
import { User } from './user.entity';

export { ApiKey, Language, SessionToken, User };

/** Every entity, for the data source. */
export const entities = [User, ApiKey, SessionToken, Language];
