import { Controller, RequestMethod, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import { refuseOtherMethods } from '../errors/other-methods.js';
import { ApiError } from '../errors/api-error.js';
import { ApiExceptionFilter } from '../errors/api-exception.filter.js';
import { PLANTS_PATH } from './plants-path.js';

/**
 * The 405 answer to any method but POST at the plant route, open so that a wrong method is
 * told 405 whether or not it carries a token. A controller of its own, registered after
 * PlantsController (PlantsModule's order): open and out of the OpenAPI document as a whole,
 * while PlantsController's routes need a token and are documented.
 */
@Public()
@UseFilters(ApiExceptionFilter)
@ApiExcludeController()
@Controller(PLANTS_PATH)
export class PlantsMethodsController {
  rejectOtherMethods(): never {
    throw ApiError.methodNotAllowed(['POST']);
  }
}

refuseOtherMethods(PlantsMethodsController, 'rejectOtherMethods', [
  RequestMethod.POST,
]);
