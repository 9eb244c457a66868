import { getContainerRuntimeClient } from 'testcontainers';
import type { PausableDatabase } from '../testing/store-faults.js';

/** A database container paused by the engine (cgroup freezer): connections open, nothing answers. */
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
