import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import type { Finished } from './podman.js';
import { eventually } from '../poll.js';

/** What the image project's global setup writes when its background build ends. */
export interface ImageBuildOutcome extends Finished {
  image: string;
}

/**
 * The longest a build may take: a fresh machine's first one took 104 s beside nothing, and
 * it now shares the machine with the rest of the suite until the image's specs start.
 */
export const IMAGE_BUILD_TIMEOUT_MS = 15 * 60_000;

/**
 * The image the project's global setup (image-setup.ts) builds for the run, once its build
 * has ended; fails with the build's output if it failed.
 */
export async function builtImage(): Promise<string> {
  const outcomeFile = inject('plantStoreImageBuild');
  const outcome = await eventually(
    `docker/build-image.sh to end (${outcomeFile})`,
    () =>
      readFile(outcomeFile, 'utf8').then(
        (text) => JSON.parse(text) as ImageBuildOutcome,
        () => undefined,
      ),
    { timeoutMs: IMAGE_BUILD_TIMEOUT_MS, everyMs: 250 },
  );
  if (outcome.code !== 0) {
    throw new Error(
      `docker/build-image.sh exited ${outcome.code}:\n${outcome.stderr}\n${outcome.stdout}`,
    );
  }
  return outcome.image;
}
