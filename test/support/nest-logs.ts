import { Logger } from '@nestjs/common';

type Level = 'log' | 'warn' | 'error' | 'debug' | 'verbose' | 'fatal';

/** The context Nest writes beside a line: the name a class gave its Logger. */
export const contextOf = (logger: Logger): unknown =>
  (logger as unknown as { context?: string }).context;

/** Gives `record` each line Nest's loggers write at `levels`, from now until the spies are restored. */
function spyOnNestLogs(
  levels: readonly Level[],
  record: (level: Level, message: unknown, context: unknown) => void,
): void {
  for (const level of levels)
    vi.spyOn(Logger.prototype, level).mockImplementation(function (
      this: Logger,
      message: unknown,
    ) {
      record(level, message, contextOf(this));
    });
}

/**
 * What Nest's loggers write at `levels` from now until the spies are restored: each line as
 * [level, message], and the contexts it was written under.
 */
export function captureNestLogs(levels: readonly Level[]): {
  logged: [string, unknown][];
  contexts: Set<unknown>;
} {
  const logged: [string, unknown][] = [];
  const contexts = new Set<unknown>();
  spyOnNestLogs(levels, (level, message, context) => {
    logged.push([level, message]);
    contexts.add(context);
  });
  return { logged, contexts };
}

/** The same, each line as [level, message, context]. */
export function captureNestLines(
  levels: readonly Level[],
): [string, unknown, unknown][] {
  const lines: [string, unknown, unknown][] = [];
  spyOnNestLogs(levels, (...line) => lines.push(line));
  return lines;
}
