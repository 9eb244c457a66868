import type { ChildProcess } from 'node:child_process';

export interface NodeProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface NodeProcessOptions {
  /** What follows `node`: flags, then the script and its arguments. */
  args: string[];
  /** The child's whole environment: nothing is inherited unless passed here. */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Lead a process group of its own, as a command started from a terminal does. */
  detached?: boolean;
  /** 'pipe' (to onOutput) or a file descriptor for stdout; stderr always goes to onOutput. */
  stdout?: 'pipe' | number;
  onOutput?: (text: string) => void;
}

/** The Node flags of `npm run start:prod` in `root`'s package.json. */
export function productionNodeFlags(root: string): string[];

export function startNodeProcess(options: NodeProcessOptions): {
  child: ChildProcess;
  exited: Promise<NodeProcessExit>;
};
