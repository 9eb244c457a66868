export function statFields(path: string): string[];
export function cpuSeconds(pid: number, tid?: number): number;
export function processTree(pid: number): number[];
export function pinProcessTree(pid: number, cpus: string): void;
export function coreSeconds(cpu: number): number;
export function treesCpuSeconds(pids: number[]): () => number;
export function endedChildrenSeconds(): number;
export function othersOnCore(
  cpu: number,
  ownSeconds: () => number,
  everyMs?: number,
): { readonly peak: number; stop(): number };
