import { getContainerRuntimeClient } from 'testcontainers';
import type { PausableDatabase } from '../testing/store-faults.js';

/**
 * A database container held still by the container engine (its pause: the cgroup freezer),
 * as SIGSTOP holds an embedded one: connections stay open, nothing answers.
 */
export function pausedContainer(id: string): PausableDatabase {
  const container = async () =>
    (await getContainerRuntimeClient()).container.getById(id);
  return {
    async pause() {
      await (await container()).pause();
    },
    async resume() {
      await (await container()).unpause();
    },
  };
}
