import { SetMetadata } from '@nestjs/common';

export const SKIP_RATE_LIMIT = 'http:skipRateLimit';

/** Routes probes call often (health, metrics) are not counted against any rate limit. */
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);
