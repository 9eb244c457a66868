import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { InFlightResponses } from './in-flight-responses.js';

/** Only what the list uses of a response: its 'close' event. */
const fakeResponse = (): ServerResponse =>
  new EventEmitter() as unknown as ServerResponse;

describe('InFlightResponses', () => {
  it('holds each response from add until it closes, whatever the order they close in', () => {
    const inFlight = new InFlightResponses();
    const [a, b, c, d] = [1, 2, 3, 4].map(fakeResponse);
    for (const response of [a, b, c, d]) inFlight.add(response);

    b.emit('close');
    a.emit('close');
    expect(new Set(inFlight)).toEqual(new Set([c, d]));

    const e = fakeResponse();
    inFlight.add(e);
    d.emit('close');
    expect(new Set(inFlight)).toEqual(new Set([c, e]));
    expect(inFlight.size).toBe(2);

    c.emit('close');
    e.emit('close');
    expect([...inFlight]).toEqual([]);
  });

  it('agrees with a Set over a long run of adds and closes in random order', () => {
    const inFlight = new InFlightResponses();
    const expected = new Set<ServerResponse>();
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let step = 0; step < 5_000; step += 1) {
      if (expected.size === 0 || random() < 0.5) {
        const response = fakeResponse();
        inFlight.add(response);
        expected.add(response);
      } else {
        const open = [...expected];
        const closing = open[Math.floor(random() * open.length)];
        closing.emit('close');
        expected.delete(closing);
      }
      expect(inFlight.size).toBe(expected.size);
    }
    expect(new Set(inFlight)).toEqual(expected);
  });

  it('lets a response close while the list is being walked, without skipping another', () => {
    const inFlight = new InFlightResponses();
    const responses = [1, 2, 3].map(fakeResponse);
    for (const response of responses) inFlight.add(response);

    const seen: ServerResponse[] = [];
    for (const response of inFlight) {
      seen.push(response);
      response.emit('close');
    }
    expect(new Set(seen)).toEqual(new Set(responses));
    expect(inFlight.size).toBe(0);
  });
});
