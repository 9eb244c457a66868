import { Global, Module } from '@nestjs/common';
import { JsonBodyGuard } from './json-body.guard.js';
import { JsonBodyReader } from './json-body.reader.js';

/** HTTP plumbing shared by feature modules: the JSON body reader behind @AcceptsJson(). */
@Global()
@Module({
  providers: [JsonBodyReader, JsonBodyGuard],
  exports: [JsonBodyReader, JsonBodyGuard],
})
export class JsonBodyModule {}
