import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'auth:isPublic';

/** Marks a route that needs no bearer token (login, registration, health). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);
