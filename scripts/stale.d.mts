/** The newest modification time (ms) under these files and folders; 0 when none exists. */
export function newest(...entries: string[]): number;
/** True when the output is missing or any input changed after it was written. */
export function stale(output: string, ...inputs: string[]): boolean;
/** The `.ts` files below `dir` (declaration files left out), as paths from the working folder. */
export function typescriptFiles(dir: string): string[];
