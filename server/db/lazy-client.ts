// A Prisma client made on first use. The org service has a client of its own (interactive
// transactions, which the query thread does not run), and making it at start loaded and
// compiled Prisma's query compiler on the main thread before the server listened; most starts
// never change an org. Every call returns a promise that connects first: model operations
// (`db.user.findMany(…)`), raw queries and interactive transactions. The batch form of
// `$transaction([…])` needs Prisma's own lazy queries and is refused, saying so.
import type { DirectDb as Db } from "./index";

type Call = (...args: unknown[]) => Promise<unknown>;

export function lazyClient(connect: () => Promise<Db>): Db {
  let client: Promise<Db> | undefined;
  // A failed connection is tried again by the next call, not remembered.
  const get = () =>
    (client ??= connect().catch((err: unknown) => {
      client = undefined;
      throw err;
    }));
  const call =
    (target: (db: Db) => Record<string, unknown>, name: string): Call =>
    (...args) =>
      get().then((db) => (target(db)[name] as Call).apply(target(db), args));
  return new Proxy({} as Db, {
    get(_, name) {
      if (typeof name !== "string" || name === "then") return undefined; // not a promise itself
      if (name === "$disconnect")
        return () =>
          client
            ? client.then(
                (db) => db.$disconnect(),
                () => undefined,
              )
            : Promise.resolve();
      if (name === "$transaction")
        return (work: unknown, ...rest: unknown[]) => {
          if (typeof work !== "function")
            return Promise.reject(
              new Error("This client connects on first use: pass $transaction a function, not a batch."),
            );
          return call((db) => db as unknown as Record<string, unknown>, name)(work, ...rest);
        };
      if (name.startsWith("$")) return call((db) => db as unknown as Record<string, unknown>, name);
      // A model: each of its operations.
      return new Proxy(
        {},
        {
          get: (_m, op) =>
            typeof op === "string"
              ? call((db) => (db as unknown as Record<string, Record<string, unknown>>)[name], op)
              : undefined,
        },
      );
    },
  });
}
