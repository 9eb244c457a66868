// What a host imports from 'plant-store' (docs/using-the-modules.md); anything else, and
// `forTheService`, is the service's own and may change without notice.
import {
  bodyLimitBytes,
  declaredLength,
  declaresBody,
} from './request-body/body-limit.js';
import { holdContinue } from './request-body/expect-continue.js';
import { NAMED_METHODS } from './errors/other-methods.js';
import { nodeRequestOf, nodeResponseOf } from './http-request/node-http.js';
import {
  listenForBrokenConnections,
  poolOf,
} from './database/bounded-query.js';

export { PlantsModule } from './plants/plants.module.js';
export {
  PLANTS_DEFAULTS,
  type PlantsModuleExtras,
  type PlantsModuleOptions,
} from './plants/plants-module.options.js';
/** The form of PlantsModuleOptions' `bodyLimit`: 16384, 16kb, 1mb. */
export { BODY_LIMIT_FORMAT } from './request-body/body-limit.js';
export { PlantsService, type StoredPlant } from './plants/plants.service.js';
/** The controller a PlantsModule registered for the create, wherever its `path` put it. */
export { PlantRoutes } from './plants/plant-routes.js';
export { PLANT_CREATED, PlantCreatedEvent } from './plants/plant-events.js';
export { PlantEntity } from './plants/plant.entity.js';
export { NewPlant } from './plants/dto/new-plant.dto.js';
export { Plant } from './plants/dto/plant.dto.js';

export { AuthModule } from './auth/auth.module.js';
export {
  AUTH_DEFAULTS,
  type AuthModuleExtras,
  type AuthModuleOptions,
  BEARER_TOKEN_FORMAT,
} from './auth/auth-module.options.js';
export {
  type AuthenticatedClient,
  TokenVerifier,
  type VerifyOptions,
} from './auth/token-verifier.js';
export { Public } from './auth/public.decorator.js';
export { RequiresToken } from './auth/requires-token.decorator.js';
export {
  ApiTokenEntity,
  type ApiTokenState,
  stateOf,
} from './managed-tokens/api-token.entity.js';
/** Managed tokens (the api_tokens table) on a connection: created, listed and revoked. */
export { ApiTokensModule } from './managed-tokens/api-tokens.module.js';
export {
  ApiTokensService,
  TokenNameTakenError,
} from './managed-tokens/api-tokens.service.js';

/** The Error body of every answer other than 200: `{ error, message }`. */
export { ErrorBody } from './errors/error-body.dto.js';
/** Error answers: ApiError, ErrorAnswer, the exception filter, their OpenAPI docs, 405s. */
export { ApiError, READ_METHODS } from './errors/api-error.js';
export { ErrorAnswer } from './errors/error-answer.js';
export { ApiErrorsModule } from './errors/api-errors.module.js';
export { ApiErrorResponses } from './errors/api-error-responses.decorator.js';
export { refuseOtherMethods } from './errors/other-methods.js';

/** What the package's logs and Error answers carry of a request: its id, its route. */
export { REQUEST_ID_HEADER, requestIdOf } from './http-request/request-id.js';
export { routeLabel } from './http-request/route-label.js';

/** The package's Prometheus registry: nothing publishes it unless the host does. */
export { MetricsModule } from './metrics/metrics.module.js';
export { MetricsService, type ShedReason } from './metrics/metrics.service.js';

/** The write circuit of a connection, which the plants' writes teach and readiness may ask. */
export { WriteCircuit } from './database/write-circuit.js';
export { WriteCircuitModule } from './database/write-circuit.module.js';
/** What a database error means: unreachable or too slow now, or a table missing. */
export {
  isDatabaseUnavailable,
  isMissingTable,
} from './database/database-errors.js';

/** The migrations that make the plants and api_tokens tables, oldest first. */
export { MIGRATIONS as PLANT_STORE_MIGRATIONS } from './database/migrations/index.js';

/** For src/service only: what its front door, request log and database start-up need. */
export const forTheService = {
  bodyLimitBytes,
  declaredLength,
  declaresBody,
  holdContinue,
  NAMED_METHODS,
  nodeRequestOf,
  nodeResponseOf,
  listenForBrokenConnections,
  poolOf,
} as const;
