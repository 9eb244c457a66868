/** A figure for the run's output, as the reliability scenarios print theirs. */
export function report(text: string): void {
  process.stdout.write(`${text}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
