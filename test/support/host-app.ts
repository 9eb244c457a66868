import {
  Body,
  Controller,
  Get,
  Module,
  NotFoundException,
  Post,
  type DynamicModule,
  type NestApplicationOptions,
  type Provider,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IsString } from 'class-validator';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { PLANT_STORE_MIGRATIONS } from '../../src/lib/index.js';
import { createScratchDatabase } from './scratch-database.js';

/** The host's own DTO: what its own ValidationPipe checks, when it has one. */
class OrderDto {
  @IsString()
  item: string;
}

/** A JSON route of the host's own: its body must arrive as the host's parser made it. */
@Controller('orders')
class OrdersController {
  @Post()
  place(@Body() order: unknown): { received: unknown } {
    return { received: order };
  }

  @Post('validated')
  placeValidated(@Body() order: OrderDto): { received: unknown } {
    return { received: order };
  }

  @Get('missing')
  missing(): never {
    throw new NotFoundException('No such order');
  }
}

export interface Host {
  app: NestExpressApplication;
  url: string;
  dataSource: DataSource;
}

/**
 * Another team's application, as docs/using-the-modules.md writes it: its own TypeORM
 * connection (this package's migrations), its own JSON route, and the modules configured
 * with forRoot, and `own` controllers and providers beside them. Nothing from the
 * service's AppModule or createApp.
 */
export async function startHost(
  modules: (DynamicModule | Type)[],
  options: NestApplicationOptions = {},
  configure: (app: NestExpressApplication) => void = () => {},
  own: { controllers?: Type[]; providers?: Provider[] } = {},
): Promise<Host> {
  const databaseUrl = await createScratchDatabase(
    inject('databaseUrl'),
    'host',
  );
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: databaseUrl,
        autoLoadEntities: true,
        migrations: PLANT_STORE_MIGRATIONS,
        migrationsRun: true,
      }),
      ...modules,
    ],
    controllers: [OrdersController, ...(own.controllers ?? [])],
    providers: own.providers ?? [],
  })
  class HostModule {}
  const app = await NestFactory.create<NestExpressApplication>(
    HostModule as Type,
    // As the guide says: a host with Nest's body parser keeps raw bodies (RawBodyCheck).
    { logger: false, rawBody: true, ...options },
  );
  configure(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl(), dataSource: app.get(DataSource) };
}
