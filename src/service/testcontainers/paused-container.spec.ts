import {
  type FakeContainerEngine,
  fakeContainerEngine,
} from '../../../test/support/fake-container-engine.js';
import { pausedContainer } from './paused-container.js';

describe('pausedContainer: a database container paused by the engine', () => {
  let engine: FakeContainerEngine;

  beforeEach(async () => {
    engine = await fakeContainerEngine();
    engine.reset();
  });

  it('asks the engine to pause, then to unpause, the container it names', async () => {
    const database = pausedContainer('postgres-7');
    await database.pause();
    await database.resume();
    expect(engine.requests.filter((r) => r.startsWith('POST'))).toEqual([
      'POST /containers/postgres-7/pause',
      'POST /containers/postgres-7/unpause',
    ]);
  });

  it('fails as the engine does', async () => {
    engine.answer('POST /containers/gone/pause', [
      404,
      { message: 'no such container' },
    ]);
    await expect(pausedContainer('gone').pause()).rejects.toThrow(
      'no such container',
    );
  });
});
