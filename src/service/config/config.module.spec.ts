import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppConfigModule } from './config.module.js';
import { Environment, validateEnvironment } from './environment.js';

/** A feature module that injects the settings without importing AppConfigModule. */
@Injectable()
class ReadsSettings {
  constructor(readonly environment: Environment) {}
}

@Module({ providers: [ReadsSettings], exports: [ReadsSettings] })
class FeatureModule {}

describe('AppConfigModule.forRoot', () => {
  it('gives every module the Environment it was handed, without their importing it', async () => {
    const environment = validateEnvironment({ PORT: '8080' });
    const moduleRef = await Test.createTestingModule({
      imports: [AppConfigModule.forRoot(environment), FeatureModule],
    }).compile();
    try {
      expect(moduleRef.get(ReadsSettings).environment).toBe(environment);
      expect(moduleRef.get(Environment)).toBe(environment);
    } finally {
      await moduleRef.close();
    }
  });
});
