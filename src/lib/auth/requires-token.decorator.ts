import { SetMetadata } from '@nestjs/common';

export const REQUIRES_TOKEN = 'plant-store:requires-token';

/**
 * Marks routes that need a bearer token even when AuthModule's guard is not global
 * (`globalGuard: false`, a host's choice): the plant routes carry it. With a global
 * guard every route needs one unless marked @Public().
 */
export const RequiresToken = (): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRES_TOKEN, true);
