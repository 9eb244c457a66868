import { Global, Module } from '@nestjs/common';
import { JsonBodyInterceptor } from './json-body.interceptor.js';
import { JsonBodyReader } from './json-body.reader.js';

/** HTTP plumbing shared by feature modules: the JSON body reader behind @AcceptsJson(). */
@Global()
@Module({
  providers: [JsonBodyReader, JsonBodyInterceptor],
  exports: [JsonBodyReader, JsonBodyInterceptor],
})
export class JsonBodyModule {}
