/**
 * A TCP port free a moment ago on the loopback interface, below the ephemeral range,
 * chosen at random, and never twice by this process.
 */
export function freePort(): Promise<number>;
