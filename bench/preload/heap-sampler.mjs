// Loaded into a server with `node --import <this file>` by bench/scenarios/heap-profile.mjs:
// the first SIGUSR2 starts V8's sampling heap profiler (every $HEAP_SAMPLE_INTERVAL bytes on
// average, keeping the samples of objects that scavenges and full collections have since
// freed, so the profile counts everything allocated, not what is still alive); the second
// stops it and writes the profile to $HEAP_SAMPLE_FILE (a .heapprofile that Chrome DevTools
// opens).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const file = process.env.HEAP_SAMPLE_FILE;
if (file !== undefined) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    sampling = !sampling;
    const done = sampling
      ? session.post('HeapProfiler.startSampling', {
          samplingInterval: Number(process.env.HEAP_SAMPLE_INTERVAL ?? 1024),
          includeObjectsCollectedByMinorGC: true,
          includeObjectsCollectedByMajorGC: true,
        })
      : session
          .post('HeapProfiler.stopSampling')
          .then(({ profile }) => writeFileSync(file, JSON.stringify(profile)));
    done.catch((error) => process.stderr.write(`heap-sampler: ${error}\n`));
  });
}
