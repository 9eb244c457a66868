import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export interface TreeCopy {
  readonly child: ChildProcess;
  /** Resolves once the copy is whole; rejects if it failed or was stopped. */
  readonly done: Promise<void>;
}

/**
 * `cp -a`: PostgreSQL must own the copy, which Node's fs.cp would not keep under root.
 * `background`: at the lowest priority (nice 19), so that it slows no start beside it.
 */
export function copyTree(
  from: string,
  to: string,
  { background = false }: { background?: boolean } = {},
): TreeCopy {
  const copy = ['cp', '-a', from, to];
  const [command, ...args] = background ? ['nice', '-n', '19', ...copy] : copy;
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    said += text;
  });
  const done = once(child, 'close').then(([code, signal]) => {
    if (code !== 0)
      throw new Error(
        `${[command, ...args].join(' ')} failed (${code ?? signal}): ${said.trim()}`,
      );
  });
  return { child, done };
}
