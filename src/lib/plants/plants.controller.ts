import {
  Body,
  Controller,
  HttpCode,
  HttpStatus,
  Post,
  Req,
  UseFilters,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Socket } from 'node:net';
import { RequiresToken } from '../auth/requires-token.decorator.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';
import { ApiExceptionFilter } from '../errors/api-exception.filter.js';
import { AcceptsJson } from '../request-body/accepts-json.decorator.js';
import { NewPlant } from './dto/new-plant.dto.js';
import { Plant } from './dto/plant.dto.js';
import { PlantBodyPipe } from './plant-body.pipe.js';
import { PLANTS_PATH } from './plants-path.js';
import { PlantsService } from './plants.service.js';

/** Recorded as Object: a host's global ValidationPipe skips it, and only the route's own pipe validates. */
type NewPlantBody = Readonly<NewPlant>;

/** Filter and pipe bound here, not as APP_FILTER or APP_PIPE, so a host's other routes keep theirs. */
@ApiTags('plants')
@ApiBearerAuth('bearerAuth')
@RequiresToken()
@UseFilters(ApiExceptionFilter)
@Controller(PLANTS_PATH)
export class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @AcceptsJson()
  @ApiOperation({
    operationId: 'addPlant',
    summary: 'Create a plant',
    description: 'Creates a new plant in the store',
  })
  @ApiBody({ type: NewPlant })
  @ApiOkResponse({ type: Plant, description: 'plant response' })
  @ApiErrorResponses(400, 401, 409, 413, 415, 429, 500, 503)
  create(
    @Body(PlantBodyPipe) newPlant: NewPlantBody,
    // Express's request and Fastify's both carry the connection's socket.
    @Req() request: { socket: Socket },
  ): Promise<Plant> {
    // A client that closed its connection is gone: its plant, if not yet sent, is not written.
    const { socket } = request;
    return this.plants.create(
      newPlant,
      () => socket.destroyed || !socket.writable,
    );
  }
}
