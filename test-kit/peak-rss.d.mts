export function samplePeakRss(pid: number): { stop(): number };
