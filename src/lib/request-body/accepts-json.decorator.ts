import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import { JsonBodyGuard } from './json-body.guard.js';

/**
 * Marks a handler whose @Body() is one JSON object, read after authentication by
 * JsonBodyGuard. The handler's module provides JsonBodyGuard and a JsonBodyReader.
 */
export const AcceptsJson = (): MethodDecorator =>
  applyDecorators(UseGuards(JsonBodyGuard), ApiConsumes('application/json'));
