export function statFields(path: string): string[];
export function cpuSeconds(pid: number, tid?: number): number;
export function processTree(pid: number): number[];
export function pinProcessTree(pid: number, cpus: string): void;
