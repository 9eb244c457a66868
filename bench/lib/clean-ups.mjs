// Everything a run starts is stopped on the way out, also on Ctrl-C: the last started first.
export class CleanUps {
  #stops = [];

  constructor(log) {
    this.log = log;
  }

  /** `stop` runs on the way out, before those added earlier. */
  add(stop) {
    this.#stops.push(stop);
  }

  /** Forgets the last `count` added: whoever added them stops them now. */
  forgetLast(count) {
    this.#stops.splice(this.#stops.length - count, count);
  }

  async runAll() {
    while (this.#stops.length > 0) {
      const stop = this.#stops.pop();
      await stop().catch((error) =>
        this.log(`clean-up failed: ${error.message}`),
      );
    }
  }

  /** On SIGINT or SIGTERM: everything stopped, then exit 130. */
  onSignals() {
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.once(signal, () => {
        this.log(`${signal}: stopping`);
        this.runAll().finally(() => process.exit(130));
      });
    }
  }
}
