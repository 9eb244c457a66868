/**
 * The package's public surface: what a host application imports from 'plant-store'.
 * Anything not exported here is the service's own and may change without notice.
 * How to use it: docs/using-the-modules.md.
 */
export { PlantsModule } from './plants/plants.module.js';
export {
  PLANTS_DEFAULTS,
  type PlantsModuleExtras,
  type PlantsModuleOptions,
} from './plants/plants-module.options.js';
export { PlantsService, type StoredPlant } from './plants/plants.service.js';
export { PLANT_CREATED, PlantCreatedEvent } from './plants/plant-events.js';
export { PlantEntity } from './plants/plant.entity.js';
export { NewPlant } from './plants/dto/new-plant.dto.js';
export { Plant } from './plants/dto/plant.dto.js';

export { AuthModule } from './auth/auth.module.js';
export {
  AUTH_DEFAULTS,
  type AuthModuleExtras,
  type AuthModuleOptions,
} from './auth/auth-module.options.js';
export {
  type AuthenticatedClient,
  TokenVerifier,
  type VerifyOptions,
} from './auth/token-verifier.js';
export { Public } from './auth/public.decorator.js';
export { RequiresToken } from './auth/requires-token.decorator.js';
export { ApiTokenEntity } from './auth/api-token.entity.js';

/** The Error body of every answer other than 200: `{ error, message }`. */
export { ErrorBody } from './errors/error-body.dto.js';

/** The migrations that make the plants and api_tokens tables, oldest first. */
export { MIGRATIONS as PLANT_STORE_MIGRATIONS } from './database/migrations/index.js';
