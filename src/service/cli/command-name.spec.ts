import { commandName } from './command-name.js';

describe('commandName', () => {
  it.each([
    [
      'the bin, from a host (npx, or a script of its own)',
      '/shop/node_modules/.bin/plant-store-token',
      'npx',
      'plant-store-token',
    ],
    [
      "the service's npm script",
      '/srv/plant-store/dist/service/cli/token.js',
      'token',
      'npm run token --',
    ],
    [
      'the file itself',
      '/srv/plant-store/dist/service/cli/token.js',
      undefined,
      'node dist/service/cli/token.js',
    ],
  ])('names %s as it was run', (_case, script, event, name) => {
    expect(commandName(script, event, '/srv/plant-store')).toBe(name);
  });
});
