import { ConfigurableModuleBuilder, type Provider } from '@nestjs/common';
import {
  buildConfigurableModule,
  settingsProvider,
  SettingsOf,
} from './module-options.js';

interface Options {
  limit?: number;
}

class Settings extends SettingsOf<Required<Options>>() {
  constructor(options: Options = {}) {
    super({ limit: options.limit ?? 10 });
  }
}

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } =
  buildConfigurableModule(
    new ConfigurableModuleBuilder<Options>({ moduleName: 'Example' }).setExtras(
      { global: false },
      (definition, extras) => ({ ...definition, global: extras.global }),
    ),
  );
class ExampleModule extends ConfigurableModuleClass {}

const optionsIn = (providers: Provider[] | undefined): unknown =>
  (
    providers?.find(
      (provider) =>
        typeof provider === 'object' &&
        provider.provide === MODULE_OPTIONS_TOKEN,
    ) as { useValue?: unknown } | undefined
  )?.useValue;

describe('buildConfigurableModule', () => {
  it('gives forRoot() with no options every default, even with extras', () => {
    const definition = ExampleModule.forRoot();
    expect(definition.module).toBe(ExampleModule);
    expect(definition.global).toBe(false);
    // toEqual, not toMatchObject: an empty object would match any options.
    expect(optionsIn(definition.providers)).toEqual({});
  });

  it('passes options and extras on as the builder does', () => {
    const definition = ExampleModule.forRoot({ limit: 3, global: true });
    expect(definition.global).toBe(true);
    expect(optionsIn(definition.providers)).toEqual({ limit: 3 });
  });
});

describe('settingsProvider', () => {
  it('builds the settings from the options given, or from none', () => {
    const provider = settingsProvider(Settings, MODULE_OPTIONS_TOKEN);
    expect(provider).toMatchObject({
      provide: Settings,
      inject: [MODULE_OPTIONS_TOKEN],
    });
    const built = provider.useFactory({ limit: 3 }) as Settings;
    expect(built).toBeInstanceOf(Settings);
    expect(built).toEqual({ limit: 3 });
    expect(provider.useFactory(undefined)).toEqual({ limit: 10 });
  });
});
