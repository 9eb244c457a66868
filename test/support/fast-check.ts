/**
 * fast-check's seed for a property spec: FC_SEED's, to reproduce a failure (fast-check
 * prints the seed of one), else a new one each run.
 */
export const FC_SEED =
  process.env.FC_SEED === undefined
    ? Date.now() % 2 ** 31
    : Number(process.env.FC_SEED);

/** The range of a plant's id, an int64. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
