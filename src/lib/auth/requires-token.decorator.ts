import { SetMetadata } from '@nestjs/common';

export const REQUIRES_TOKEN = 'plant-store:requires-token';

/** Marks routes that need a bearer token when AuthModule's guard is not global (the plant routes). */
export const RequiresToken = (): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRES_TOKEN, true);
