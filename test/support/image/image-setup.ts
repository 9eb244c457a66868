import { rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type Finished, run } from './podman.js';
import { report, seconds } from '../report.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The image the project's specs run: built once for the run by this setup. */
    plantStoreImage: string;
    /** The file the build's outcome is written to when it ends (built-image.ts). */
    plantStoreImageBuild: string;
  }
}

/**
 * The image project's global setup: builds the image from docker/Dockerfile once, under a
 * tag of this run, for every spec of the project; untags it at the end (the layers stay in
 * podman's storage as the next build's cache).
 *
 * The build runs in the background: Vitest runs every project's global setup before the
 * first test of any, so a build awaited here held the whole suite for it (104 s on a fresh
 * machine, docs/testing.md), while the image's specs run last. The project's setup file
 * (built-image.ts) waits for it before each spec, and fails with its output if it failed.
 */
export default function setup(project: TestProject) {
  const image = `localhost/plant-store:image-test-${process.pid}`;
  const outcomeFile = join(
    tmpdir(),
    `plant-store-image-build-${process.pid}.json`,
  );
  const started = Date.now();
  // Written whole, then renamed into place: built-image.ts never reads half of it.
  const written = async (outcome: Finished) => {
    await writeFile(`${outcomeFile}.part`, JSON.stringify(outcome));
    await rename(`${outcomeFile}.part`, outcomeFile);
  };
  const building = run('docker/build-image.sh', [image]).then(
    (build) => {
      // The script's own summary (which base, how long), not podman build's every step.
      report(
        `docker/build-image.sh ${image}: ${seconds(Date.now() - started)}\n` +
          build.stdout
            .split('\n')
            .filter((line) => /^(Base|Stand-in|  done|Built)/.test(line))
            .join('\n'),
      );
      return written(build);
    },
    (error: unknown) =>
      written({ code: null, stdout: '', stderr: String(error) }),
  );
  project.provide('plantStoreImage', image);
  project.provide('plantStoreImageBuild', outcomeFile);
  return async () => {
    await building;
    await run('podman', ['untag', image]);
    await rm(outcomeFile, { force: true });
  };
}
