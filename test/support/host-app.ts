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
import {
  FastifyAdapter,
  type NestFastifyApplication,
} from '@nestjs/platform-fastify';
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

/** The HTTP adapters a host may run on: the package runs on both. */
export const HOST_ADAPTERS = ['express', 'fastify'] as const;
export type HostAdapter = (typeof HOST_ADAPTERS)[number];

export interface Host {
  app: NestExpressApplication;
  url: string;
  dataSource: DataSource;
}

/** How a host is made beyond its modules; each part has Nest's default when left out. */
export interface HostSettings {
  /** NestFactory's options (`rawBody: true` unless given). */
  options?: NestApplicationOptions;
  /** Done to the application before it listens (a global prefix, a pipe, a parser). */
  configure?: (app: NestExpressApplication) => void;
  /** The host's own controllers and providers, beside the modules. */
  own?: { controllers?: Type[]; providers?: Provider[] };
  adapter?: HostAdapter;
}

/**
 * Another team's application, as docs/using-the-modules.md writes it: its own TypeORM
 * connection (this package's migrations), its own JSON route, and the modules configured
 * with forRoot, and `own` controllers and providers beside them. Nothing from the
 * service's AppModule or createApp.
 */
export async function startHost(
  modules: (DynamicModule | Type)[],
  {
    options = {},
    configure = () => {},
    own = {},
    adapter = 'express',
  }: HostSettings = {},
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
  // As the guide says: a host with Nest's body parser keeps raw bodies (RawBodyCheck).
  const settings = { logger: false as const, rawBody: true, ...options };
  const app =
    adapter === 'express'
      ? await NestFactory.create<NestExpressApplication>(
          HostModule as Type,
          settings,
        )
      : // A Fastify host's app has the same methods the tests use (close, getUrl, get...).
        ((await NestFactory.create<NestFastifyApplication>(
          HostModule as Type,
          new FastifyAdapter(),
          settings,
        )) as unknown as NestExpressApplication);
  configure(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl(), dataSource: app.get(DataSource) };
}
