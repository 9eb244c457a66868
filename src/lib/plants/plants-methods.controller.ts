import { Controller, RequestMethod, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import { refuseOtherMethods } from '../errors/other-methods.js';
import { ApiError } from '../errors/api-error.js';
import { ApiExceptionFilter } from '../errors/api-exception.filter.js';
import { PLANTS_PATH } from './plants-path.js';

/** 405 for any method but POST at the plant route: its own controller, so it stays open and undocumented. */
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
