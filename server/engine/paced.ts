// The engine's database work, one query per turn of the event loop. better-sqlite3 is
// synchronous and Prisma's adapter wraps it in resolved promises, so a query never yields to
// I/O: when 50 turns start or end together, their queries run back to back in microtasks and
// the tokens of turns already streaming wait for all of them (hundreds of ms in
// bench/token-latency ×50). Queued here, each query waits for its own loop turn, and the
// tokens read in between go out first. A lone query waits one setImmediate. On PostgreSQL the
// driver does yield; there the pacing spreads the queries' compiling over loop turns the same
// way (measured: ×50 p99 lower on both databases).
import type { Db } from "../db";

export function pacedDb(db: Db): Db {
  const waiting: (() => void)[] = [];
  let running = false;
  const next = () => {
    const go = waiting.shift();
    if (!go) {
      running = false;
      return;
    }
    go();
    setImmediate(next);
  };
  const turn = () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (!running) {
        running = true;
        setImmediate(next);
      }
    });
  return db.$extends({
    query: {
      async $allOperations({ args, query }) {
        await turn();
        return query(args);
      },
    },
  }) as unknown as Db;
}
