import type {
  ConfigurableModuleBuilder,
  ConfigurableModuleCls,
  ConfigurableModuleHost,
  DynamicModule,
  FactoryProvider,
  InjectionToken,
} from '@nestjs/common';

/** A module class with forRoot's options optional. */
export type ConfigurableModuleWithDefaults<Options, Extras> =
  ConfigurableModuleCls<Options, 'forRoot', 'create', Extras> & {
    forRoot(options?: Options & Partial<Extras>): DynamicModule;
  };

/** forRoot and forRootAsync by ConfigurableModuleBuilder, with forRoot's options optional (every default). */
export function buildConfigurableModule<
  Options extends object,
  Extras,
  MethodKey extends string,
>(
  builder: ConfigurableModuleBuilder<Options, MethodKey, 'create', Extras>,
): ConfigurableModuleHost<Options, 'forRoot', 'create', Extras> & {
  ConfigurableModuleClass: ConfigurableModuleWithDefaults<Options, Extras>;
} {
  const built = builder.setClassMethodName('forRoot').build();
  const ConfigurableModuleClass = class extends built.ConfigurableModuleClass {
    // Every option has a default, so none at all is a valid set.
    static override forRoot(
      options = {} as Options & Partial<Extras>,
    ): DynamicModule {
      return super.forRoot(options);
    }
  };
  return { ...built, ConfigurableModuleClass };
}

/** The module's settings, built once from forRoot's or forRootAsync's options. */
export function settingsProvider<Options, Settings>(
  settings: new (options?: Options) => Settings,
  optionsKey: InjectionToken,
): FactoryProvider<Settings> {
  return {
    provide: settings,
    inject: [optionsKey],
    useFactory: (options: Options | undefined) => new settings(options),
  };
}

/** Base of a settings class: the option fields, read-only; the subclass checks and fills defaults. */
export function SettingsOf<Fields extends object>(): new (
  fields: Fields,
) => Readonly<Fields> {
  return class {
    constructor(fields: Fields) {
      Object.assign(this, fields);
    }
  } as new (fields: Fields) => Readonly<Fields>;
}
