import {
  missingV8Flags,
  runWithServiceV8Flags,
  SERVICE_V8_FLAGS,
} from './v8-flags.js';

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
    // One dash, as Node's command line also takes a V8 flag.
    expect(missingV8Flags(['-max-semi-space-size=32', '-no-maglev'])).toEqual([
      '--heap-growing-percent=50',
      '--no-allocation-site-pretenuring',
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

describe('runWithServiceV8Flags: a process without the flags replaces itself with them', () => {
  const argv = process.argv;
  const execArgv = process.execArgv;
  /** process.execve as this process has it, undefined on a Node without it. */
  const execve = Object.getOwnPropertyDescriptor(process, 'execve');
  let replaced: ReturnType<typeof vi.fn>;

  beforeEach(() => {
    process.argv = [process.execPath, '/srv/dist/service/main.js', '--trace'];
    process.execArgv = ['--enable-source-maps'];
    vi.stubEnv('NODE_OPTIONS', undefined);
    // A real execve never returns; this one records what it was given.
    replaced = vi.fn();
    Object.defineProperty(process, 'execve', {
      value: replaced,
      configurable: true,
      writable: true,
    });
  });
  afterEach(() => {
    process.argv = argv;
    process.execArgv = execArgv;
    vi.unstubAllEnvs();
    if (execve === undefined) delete (process as { execve?: unknown }).execve;
    else Object.defineProperty(process, 'execve', execve);
    vi.restoreAllMocks();
  });

  it('runs Node again, same script and arguments, with the missing flags first', () => {
    vi.stubEnv('NODE_OPTIONS', '--no-maglev');
    runWithServiceV8Flags();
    expect(replaced.mock.calls).toEqual([
      [
        process.execPath,
        [
          process.argv0,
          '--max-semi-space-size=16',
          '--heap-growing-percent=50',
          '--no-allocation-site-pretenuring',
          '--enable-source-maps',
          '/srv/dist/service/main.js',
          '--trace',
        ],
      ],
    ]);
  });

  it('does nothing when every flag is given', () => {
    process.execArgv = [...SERVICE_V8_FLAGS];
    runWithServiceV8Flags();
    expect(replaced).not.toHaveBeenCalled();
  });

  it('runs on without them, where Node has no execve', () => {
    Object.defineProperty(process, 'execve', {
      value: undefined,
      configurable: true,
      writable: true,
    });
    const warning = vi
      .spyOn(process, 'emitWarning')
      .mockImplementation(() => {});
    expect(() => runWithServiceV8Flags()).not.toThrow();
    expect(warning).not.toHaveBeenCalled();
  });

  it('runs on without them, saying so, where execve fails', () => {
    replaced.mockImplementation(() => {
      throw new Error('EPERM');
    });
    const warning = vi
      .spyOn(process, 'emitWarning')
      .mockImplementation(() => {});
    runWithServiceV8Flags();
    expect(warning.mock.calls).toEqual([
      [
        'Running without the V8 flags --max-semi-space-size=16 --heap-growing-percent=50 --no-maglev --no-allocation-site-pretenuring: Error: EPERM',
      ],
    ]);
  });
});
