// Loaded into a server with `node --import <this file>` by bench/scenarios/memory-check.mjs: on
// SIGUSR2 it appends one JSON line to $MEMORY_SPLIT_FILE with what only the process itself
// can tell about its memory: how much of its resident memory is V8's heap, space by space,
// and the peak of V8's own malloc'd memory (the compilers' zones). Everything else
// anonymous is malloc and the like, which the checker works out from /proc.
import { appendFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.MEMORY_SPLIT_FILE;
if (file !== undefined)
  process.on('SIGUSR2', () => {
    const heap = v8.getHeapStatistics();
    const spaces = Object.fromEntries(
      v8
        .getHeapSpaceStatistics()
        .filter((space) => space.physical_space_size > 0)
        .map((space) => [space.space_name, space.physical_space_size]),
    );
    appendFileSync(
      file,
      `${JSON.stringify({
        pid: process.pid,
        v8Physical: heap.total_physical_size,
        v8PeakMalloced: heap.peak_malloced_memory,
        spaces,
      })}\n`,
    );
  });
