import { PLANTS_DEFAULTS, PlantsSettings } from './plants-module.options.js';

describe('PlantsSettings', () => {
  it('fills every option left out, or given as undefined, with its default', () => {
    expect(new PlantsSettings()).toEqual({
      ...PLANTS_DEFAULTS,
      bodyLimitBytes: 16_384,
    });
    expect(
      new PlantsSettings({ bodyLimit: undefined, insertQueueLimit: 5 }),
    ).toMatchObject({ bodyLimit: '16kb', insertQueueLimit: 5 });
  });

  it('refuses, at start, options the module could not work with', () => {
    expect(() => new PlantsSettings({ bodyLimit: '16 kilobytes' })).toThrow(
      /bodyLimit must be a size/,
    );
    expect(() => new PlantsSettings({ databaseRequestTimeoutMs: 0 })).toThrow(
      /databaseRequestTimeoutMs must be a positive integer/,
    );
  });
});
