// Types of early.mjs (plain JavaScript: start.mjs runs it before anything is compiled).
import type { Worker } from "node:worker_threads";

export declare const THREAD_BOOT: string;
export declare function startEarlyThread(workerData: Record<string, unknown>): Worker;
export declare function adoptEarlyThread(workerData: Record<string, unknown>): Worker | undefined;
export declare function endUnadoptedThreads(): string[];
export declare function adoptedThreads(): number;
export declare function lowerOtherThreads(offset: number): void;
