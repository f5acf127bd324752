// Keeps the event loop alive while the server starts. Node leaves its event loop whenever
// nothing in it is pending (no socket, timer or file request), which happens during a start
// while the work awaited is elsewhere (a module import settling, a worker thread compiling).
// Before looking again, Node then waits until every V8 background task of the process has
// finished, those of the worker threads included (NodePlatform::DrainTasks): on a busy 2-core
// machine the main thread sat there 2-4 s, idle, while the query thread's Prisma WebAssembly
// compiled, before `import("next")` went on. A timer that never fires keeps the loop in its
// poll, where the main thread goes on as soon as its own work is ready.
export function holdEventLoop(): () => void {
  // Longer than any start; it never fires, it only counts as pending.
  const timer = setInterval(() => undefined, 1 << 30);
  return () => clearInterval(timer);
}
