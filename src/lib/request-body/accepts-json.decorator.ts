import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import { JsonBodyGuard } from './json-body.guard.js';

/** Marks a handler whose @Body() is one JSON object, read after authentication by JsonBodyGuard. */
export const AcceptsJson = (): MethodDecorator =>
  applyDecorators(UseGuards(JsonBodyGuard), ApiConsumes('application/json'));
