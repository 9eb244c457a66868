import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';

type Level = 'log' | 'warn' | 'error' | 'debug' | 'verbose' | 'fatal';

/** The context Nest writes beside a line: the name a class gave its Logger. */
export const contextOf = (logger: Logger): unknown =>
  (logger as unknown as { context?: string }).context;

/**
 * Gives `record` each line Nest's loggers write at `levels`, with what came after its message,
 * from now until the spies are restored.
 */
function spyOnNestLogs(
  levels: readonly Level[],
  record: (
    level: Level,
    message: unknown,
    context: unknown,
    rest: unknown[],
  ) => void,
): void {
  for (const level of levels)
    vi.spyOn(Logger.prototype, level).mockImplementation(function (
      this: Logger,
      message: unknown,
      ...rest: unknown[]
    ) {
      record(level, message, contextOf(this), rest);
    });
}

/**
 * What Nest's loggers write at `levels` from now until the spies are restored: each line as
 * [level, message], what came after the message (a stack), and the contexts it was written under.
 */
export function captureNestLogs(levels: readonly Level[]): {
  logged: [string, unknown][];
  details: unknown[][];
  contexts: Set<unknown>;
} {
  const logged: [string, unknown][] = [];
  const details: unknown[][] = [];
  const contexts = new Set<unknown>();
  spyOnNestLogs(levels, (level, message, context, rest) => {
    logged.push([level, message]);
    details.push(rest);
    contexts.add(context);
  });
  return { logged, details, contexts };
}

/** The same, each line as [level, message, context]. */
export function captureNestLines(
  levels: readonly Level[],
): [string, unknown, unknown][] {
  const lines: [string, unknown, unknown][] = [];
  spyOnNestLogs(levels, (level, message, context) =>
    lines.push([level, message, context]),
  );
  return lines;
}

/** Logger's process-wide state: the instance every Logger writes through, and the levels. */
const nestLogger = Logger as unknown as {
  staticInstanceRef?: LoggerService;
  logLevels?: LogLevel[];
};

/**
 * For the tests of the describe it is called in: Nest's process-wide logger as it was before
 * each, put back after it. An application made by createApp installs its own (useLogger),
 * which would otherwise outlive it in the shared unit process.
 */
export function keepNestLogger(): void {
  let instance: LoggerService | undefined;
  let levels: LogLevel[] | undefined;
  beforeEach(() => {
    instance = nestLogger.staticInstanceRef;
    levels = nestLogger.logLevels;
  });
  afterEach(() => {
    nestLogger.staticInstanceRef = instance;
    nestLogger.logLevels = levels;
  });
}
