import { Logger } from '@nestjs/common';

type Level = 'log' | 'warn' | 'error' | 'debug' | 'verbose' | 'fatal';

/** The context Nest writes beside a line: the name a class gave its Logger. */
export const contextOf = (logger: Logger): unknown =>
  (logger as unknown as { context?: string }).context;

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
  for (const level of levels)
    vi.spyOn(Logger.prototype, level).mockImplementation(function (
      this: Logger,
      message: unknown,
    ) {
      logged.push([level, message]);
      contexts.add(contextOf(this));
    });
  return { logged, contexts };
}
