import { satisfiesEngines } from './node-version.js';

describe('satisfiesEngines, the check of package.json engines at start', () => {
  it.each([
    ['v24.11.0', true],
    ['v24.21.0', true],
    ['v24.11.5', true],
    ['v24.10.9', false],
    ['v20.20.2', false],
    ['v25.0.0', false],
  ])('^24.11.0 and %s: %s', (version, expected) => {
    expect(satisfiesEngines('^24.11.0', version)).toBe(expected);
  });

  it('does not judge a range written in another form', () => {
    expect(satisfiesEngines('>=18', 'v20.0.0')).toBe(true);
  });
});
