import { missingV8Flags, SERVICE_V8_FLAGS } from './v8-flags.js';

describe('missingV8Flags', () => {
  it('names every flag of the service for `node dist/service/main.js`', () => {
    expect(missingV8Flags([])).toEqual([
      '--max-semi-space-size=16',
      '--heap-growing-percent=50',
      '--no-maglev',
      '--no-allocation-site-pretenuring',
    ]);
    expect(missingV8Flags([], '')).toEqual(SERVICE_V8_FLAGS);
  });

  it('names none once they are all given, whatever else is', () => {
    expect(
      missingV8Flags([
        '--enable-source-maps',
        ...SERVICE_V8_FLAGS,
        '--import=./preload.mjs',
      ]),
    ).toEqual([]);
  });

  it("leaves a flag the operator set to the operator, with any value or sense, in V8's spellings", () => {
    expect(
      missingV8Flags([
        '--max_semi_space_size=64',
        '--maglev',
        '--heap-growing-percent',
        '0',
      ]),
    ).toEqual(['--no-allocation-site-pretenuring']);
    expect(missingV8Flags(['--allocation-site-pretenuring'])).toEqual([
      '--max-semi-space-size=16',
      '--heap-growing-percent=50',
      '--no-maglev',
    ]);
  });

  it('counts flags set in NODE_OPTIONS, which the command line would override', () => {
    expect(
      missingV8Flags(
        ['--no-maglev'],
        '--max-old-space-size=512  --max-semi-space-size=32',
      ),
    ).toEqual([
      '--heap-growing-percent=50',
      '--no-allocation-site-pretenuring',
    ]);
  });

  it('reads only options as flags, never the values beside them', () => {
    expect(missingV8Flags(['--title', 'maglev', '--no-maglev'])).toEqual([
      '--max-semi-space-size=16',
      '--heap-growing-percent=50',
      '--no-allocation-site-pretenuring',
    ]);
    expect(missingV8Flags(['--title', 'maglev'])).toContain('--no-maglev');
  });
});
