// Test fixture for key-store-crash.test.ts: a server process's first claim of a runner id for a
// key (key-store.ts), with the real database, held just before its binding write until a line
// comes on stdin, and stopped (waiting to be killed -9) as soon as that write is done, before
// anything the claim would do after it:
//   tsx server/executors/runner/key-claim-child.ts <database-url> <runner-id> <public-key>
// It prints `at write` when held and `stopped` once the write is done.
import { createInterface } from "node:readline";
import { openDb, type Db } from "../../db";
import { runnerKeyStore } from "./key-store";

const [url, runnerId, publicKey] = process.argv.slice(2);
const { db, provider } = await openDb(url);
const go = new Promise((r) => createInterface({ input: process.stdin }).once("line", r));
const say = (line: string) => process.stdout.write(`${line}\n`);

type Fn = (...args: unknown[]) => Promise<unknown>;
const held =
  (f: Fn): Fn =>
  async (...args) => {
    say("at write");
    await go;
    await f(...args);
    say("stopped");
    return new Promise<never>(() => undefined);
  };
const bound = (target: object, prop: string | symbol) => {
  const v: unknown = Reflect.get(target, prop);
  return typeof v === "function" ? (v as Fn).bind(target) : v;
};
// The binding writes of either version of the store: a model create, or its raw statement
// (SQLite) or batch (PostgreSQL).
const watched = new Proxy(db, {
  get(target, prop) {
    if (prop === "runnerIdKey")
      return new Proxy(target.runnerIdKey, {
        get: (model, p) => (p === "create" ? held(bound(model, p) as Fn) : bound(model, p)),
      });
    if (prop === "$transaction" || (prop === "$executeRawUnsafe" && provider === "sqlite"))
      return held(bound(target, prop) as Fn);
    return bound(target, prop);
  },
}) as Db;
const claimed = await runnerKeyStore(watched, provider).claim(runnerId, publicKey);
say(`claimed ${JSON.stringify(claimed)}`);
say("stopped");
await new Promise(() => undefined);
