// The contract as the NestJS documentation teaches it: what a team would write instead of
// this service. A yardstick, not a second implementation: Express, a global ValidationPipe,
// passport's bearer strategy behind AuthGuard, TypeORM's repository.insert, and one
// exception filter for the Error body; no logs, metrics, load shedding or grouping.
// Ids are JavaScript numbers here, as the docs' DTOs have them (exact only up to 2^53).
//
// Environment: DATABASE_URL, API_TOKENS (comma-separated), PORT, HOST, DATABASE_POOL_SIZE,
// HTTP_ADAPTER (express, Nest's default, or fastify: @nestjs/platform-fastify, as the docs'
// Performance (Fastify) page sets it up).
// The plants table must exist (the service's migration creates it). Compiled by
// bench/servers/tsconfig.json.
import 'reflect-metadata';
import {
  type ArgumentsHost,
  Body,
  Catch,
  ConflictException,
  Controller,
  type ExceptionFilter,
  Get,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  Post,
  UseGuards,
  ValidationPipe,
} from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { Strategy } from 'passport-http-bearer';
import {
  Column,
  Entity,
  PrimaryColumn,
  QueryFailedError,
  type Repository,
} from 'typeorm';

@Entity({ name: 'plants' })
class PlantRecord {
  @PrimaryColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', nullable: true })
  tag: string | null;
}

class CreatePlantDto {
  @IsInt()
  id: number;

  @IsString()
  name: string;

  @IsOptional()
  @IsString()
  tag?: string;
}

const tokens = new Set(
  (process.env.API_TOKENS ?? '').split(',').filter((token) => token !== ''),
);

@Injectable()
class HttpBearerStrategy extends PassportStrategy(Strategy) {
  validate(token: string): { token: string } | false {
    return tokens.has(token) ? { token } : false;
  }
}

@Injectable()
class PlantsService {
  constructor(
    @InjectRepository(PlantRecord)
    private readonly plants: Repository<PlantRecord>,
  ) {}

  async create(dto: CreatePlantDto): Promise<{ name: string; tag?: string }> {
    try {
      await this.plants.insert({ id: dto.id, name: dto.name, tag: dto.tag });
    } catch (error) {
      if (
        error instanceof QueryFailedError &&
        (error.driverError as { code?: string }).code === '23505'
      )
        throw new ConflictException('A plant with this id already exists.');
      throw error;
    }
    return dto.tag === undefined
      ? { name: dto.name }
      : { name: dto.name, tag: dto.tag };
  }
}

@Controller('plants')
class PlantsController {
  constructor(private readonly plantsService: PlantsService) {}

  @Post()
  @HttpCode(200)
  @UseGuards(AuthGuard('bearer'))
  create(@Body() dto: CreatePlantDto) {
    return this.plantsService.create(dto);
  }
}

/** What the benchmark polls before it measures. */
@Controller('health')
class HealthController {
  @Get()
  check(): { status: string } {
    return { status: 'ok' };
  }
}

/** Platform-agnostic, as the docs' exception filters page writes it: through the adapter. */
@Catch()
class ErrorBodyFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const status =
      exception instanceof HttpException ? exception.getStatus() : 500;
    const message =
      exception instanceof HttpException
        ? exception.message
        : 'Internal server error';
    this.adapterHost.httpAdapter.reply(
      host.switchToHttp().getResponse(),
      { error: status, message },
      status,
    );
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [PlantRecord],
      applicationName: 'plant-store-docs-style',
      extra: { max: Number(process.env.DATABASE_POOL_SIZE ?? 10) },
    }),
    TypeOrmModule.forFeature([PlantRecord]),
    PassportModule,
  ],
  controllers: [PlantsController, HealthController],
  providers: [PlantsService, HttpBearerStrategy],
})
class AppModule {}

const app =
  process.env.HTTP_ADAPTER === 'fastify'
    ? await NestFactory.create(AppModule, new FastifyAdapter(), {
        logger: ['error'],
      })
    : await NestFactory.create(AppModule, { logger: ['error'] });
app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
app.useGlobalFilters(new ErrorBodyFilter(app.get(HttpAdapterHost)));
app.enableShutdownHooks();
await app.listen(
  Number(process.env.PORT ?? 3002),
  process.env.HOST ?? '127.0.0.1',
);
