import { Module } from '@nestjs/common';
import { JsonBodyGuard } from './json-body.guard.js';
import { JsonBodyReader } from './json-body.reader.js';

/**
 * The JSON body reader behind @AcceptsJson(). A feature module whose routes use it imports
 * this module; the reader needs the validated environment (BODY_LIMIT) from its host.
 */
@Module({
  providers: [JsonBodyReader, JsonBodyGuard],
  exports: [JsonBodyReader, JsonBodyGuard],
})
export class JsonBodyModule {}
