// The one way a test or the benchmark (bench/) starts the built service, or any Node
// script, as a child process. Plain JavaScript so the .mjs benchmark can import it too;
// its types are in node-process.d.mts.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node flags production starts the service with: those of `npm run start:prod`
 * (`node <flags> dist/service/main.js`) in `root`'s package.json, where they are written down once
 * (the Dockerfile and `npm start` are checked against them), so that the tests and the
 * benchmark run the service as it runs.
 */
export function productionNodeFlags(root) {
  const { scripts } = JSON.parse(
    readFileSync(join(root, 'package.json'), 'utf8'),
  );
  const match = /^node\s+(.*?)\s*dist\/(?:service\/)?main\.js$/.exec(
    scripts['start:prod'] ?? '',
  );
  if (match === null)
    throw new Error(
      'package.json start:prod is not "node <flags> dist/service/main.js"',
    );
  return match[1].split(/\s+/).filter(Boolean);
}

/**
 * Runs `node <args>` on this process's own Node binary (the project's Node 24, whoever
 * launched us), with exactly `env`. Its output goes to `onOutput`, or stdout to a file
 * descriptor given as `stdout`. The child is killed if this process exits first, so a
 * failed test or an interrupted benchmark never leaves a service running.
 */
export function startNodeProcess({
  args,
  env,
  cwd,
  detached = false,
  stdout = 'pipe',
  onOutput = () => {},
}) {
  const child = spawn(process.execPath, args, {
    cwd,
    env,
    detached,
    stdio: ['ignore', stdout, 'pipe'],
  });
  child.stdout?.on('data', (chunk) => onOutput(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk) => onOutput(chunk.toString('utf8')));
  const reap = () => void child.kill('SIGKILL');
  process.once('exit', reap);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', reap);
      resolve({ code, signal });
    }),
  );
  return { child, exited };
}
