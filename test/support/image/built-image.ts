import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import type { Finished } from './podman.js';
import { eventually } from '../poll.js';

/**
 * The longest a build may take: a fresh machine's first one took 104 s beside nothing, and
 * it now shares the machine with the rest of the suite until the image's specs start.
 */
const IMAGE_BUILD_TIMEOUT_MS = 15 * 60_000;

/**
 * The image project's setup file: before each of its specs, waits until the build the
 * project's global setup (image-setup.ts) started in the background has ended, and fails
 * with the build's output if it failed. The specs then run `inject('plantStoreImage')`.
 */
const outcomeFile = inject('plantStoreImageBuild');
const outcome = await eventually(
  `docker/build-image.sh to end (${outcomeFile})`,
  () =>
    readFile(outcomeFile, 'utf8').then(
      (text) => JSON.parse(text) as Finished,
      () => undefined,
    ),
  { timeoutMs: IMAGE_BUILD_TIMEOUT_MS, everyMs: 250 },
);
if (outcome.code !== 0) {
  throw new Error(
    `docker/build-image.sh exited ${outcome.code}:\n${outcome.stderr}\n${outcome.stdout}`,
  );
}
