import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'plant-store:is-public';

/** Opens a route to callers without a token; every other route requires one. */
export const Public = (): MethodDecorator & ClassDecorator =>
  SetMetadata(IS_PUBLIC, true);
