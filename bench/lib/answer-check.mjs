// Whether a scenario's answers and the table agree: the database is asked what it holds for
// every id sent, answered or not.
import { countPresent, countRows } from './database.mjs';

/**
 * What the database says about the answers. Every 200 must be a row; a request answered
 * otherwise must have written nothing; a request with no answer (in flight when a closed
 * loop stopped, or lost) may or may not have; and no other row may appear.
 */
export async function checkAnswers(pool, rowsBefore, answers) {
  const { okIds, failedIds, lostIds, statuses } = answers;
  const { wrongAnswers, socketErrors, timeouts } = answers;
  const rowsAdded = (await countRows(pool)) - rowsBefore;
  const missing = okIds.length - (await countPresent(pool, okIds));
  const writtenForFailures = await countPresent(pool, failedIds);
  const writtenUnanswered = await countPresent(pool, lostIds);
  const stray =
    rowsAdded -
    (okIds.length - missing) -
    writtenForFailures -
    writtenUnanswered;
  const non200 = Object.entries(statuses)
    .filter(([status]) => status !== '200')
    .reduce((sum, [, count]) => sum + count, 0);
  const errorDetail = {};
  if (non200)
    errorDetail.statuses = Object.fromEntries(
      Object.entries(statuses).filter(([s]) => s !== '200'),
    );
  if (socketErrors) errorDetail.socketErrors = socketErrors;
  if (timeouts) errorDetail.timeouts = timeouts;
  if (wrongAnswers) errorDetail.wrongAnswers = wrongAnswers;
  if (missing) errorDetail.missingRows = missing;
  if (writtenForFailures) errorDetail.rowsForFailedAnswers = writtenForFailures;
  if (stray) errorDetail.strayRows = stray;
  // Requests cut off at the end of a closed loop are not errors; lost ones are (counted
  // as socket errors or timeouts above).
  const cutOff = lostIds.length - socketErrors - timeouts;
  return {
    errors:
      non200 +
      socketErrors +
      timeouts +
      wrongAnswers +
      missing +
      Math.abs(stray),
    // The answers and the table disagree: what "correct" rules out, load or not.
    integrityErrors:
      wrongAnswers + missing + writtenForFailures + Math.abs(stray),
    errorDetail,
    cutOff,
    unansweredRows: writtenUnanswered,
  };
}

/** The answers of two windows on one table (a warm-up and its measured window) as one. */
export function combineAnswers(a, b) {
  const sum = (field) => a[field] + b[field];
  return {
    okIds: [...a.okIds, ...b.okIds],
    failedIds: [...a.failedIds, ...b.failedIds],
    lostIds: [...a.lostIds, ...b.lostIds],
    statuses: mergeCounts(a.statuses, b.statuses),
    wrongAnswers: sum('wrongAnswers'),
    socketErrors: sum('socketErrors'),
    timeouts: sum('timeouts'),
  };
}

function mergeCounts(a, b) {
  const merged = { ...a };
  for (const [key, value] of Object.entries(b))
    merged[key] = (merged[key] ?? 0) + value;
  return merged;
}
