import type { TestProject } from 'vitest/node';
import { run } from './podman.js';
import { report, seconds } from '../report.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The image the project's specs run: built once for the run by this setup. */
    plantStoreImage: string;
  }
}

/**
 * The image project's global setup: builds the image from docker/Dockerfile once, under a
 * tag of this run, for every spec of the project; untags it at the end (the layers stay in
 * podman's storage as the next build's cache).
 */
export default async function setup(project: TestProject) {
  const image = `localhost/plant-store:image-test-${process.pid}`;
  const started = Date.now();
  const build = await run('docker/build-image.sh', [image]);
  // The script's own summary (which base, how long), not podman build's every step.
  report(
    `docker/build-image.sh ${image}: ${seconds(Date.now() - started)}\n` +
      build.stdout
        .split('\n')
        .filter((line) => /^(Base|Stand-in|  done|Built)/.test(line))
        .join('\n'),
  );
  if (build.code !== 0) {
    throw new Error(
      `docker/build-image.sh exited ${build.code}:\n${build.stderr}\n${build.stdout}`,
    );
  }
  project.provide('plantStoreImage', image);
  return async () => {
    await run('podman', ['untag', image]);
  };
}
