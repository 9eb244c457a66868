import { All, Controller, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { ApiExceptionFilter } from '../errors/api-exception.filter.js';
import { PLANTS_PATH } from './plants-path.js';

/**
 * The 405 answer to any method but POST at the plant route, open so that a wrong method is
 * told 405 whether or not it carries a token. A controller of its own, registered after
 * PlantsController (PlantsModule's order), so that what is bound to PlantsController's
 * routes (the service's load shedding) is mounted on the create alone: Nest mounts a
 * middleware once per route, and on an all-methods route it would run for every create a
 * second time (measured: bench/RESULTS.md, issue 19 item 7).
 */
@Public()
@UseFilters(ApiExceptionFilter)
@ApiExcludeController()
@Controller(PLANTS_PATH)
export class PlantsMethodsController {
  @All()
  rejectOtherMethods(): never {
    throw ApiError.methodNotAllowed(['POST']);
  }
}
