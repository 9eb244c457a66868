import { execFile, type ExecFileOptions } from 'node:child_process';
import { promisify } from 'node:util';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end and answers its exit code and output, failed or not. */
export async function runCommand(
  file: string,
  args: string[],
  options: ExecFileOptions = {},
): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, {
      ...options,
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CommandResult;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
