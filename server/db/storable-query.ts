// The PostgreSQL Prisma client's query extension: PostgreSQL's text and jsonb hold no NUL nor
// unpaired surrogate (storable.ts), so a write's data from a person or a model is stored with
// stand-ins instead of failing with a raw database error, a filter is read the same way (it
// finds what such a write stored), and a raw query's parameters go as the driver's pools send
// theirs. Raw queries run on the Prisma adapter's own pool, which driver.ts does not wrap.
import { Prisma } from "./generated/postgresql/client";
import { pgValue, storable } from "./storable";

const WRITES = new Set([
  "create",
  "createMany",
  "createManyAndReturn",
  "update",
  "updateMany",
  "updateManyAndReturn",
  "upsert",
]);

const RAW_UNSAFE = new Set(["$queryRawUnsafe", "$executeRawUnsafe"]);
const RAW_TAGGED = new Set(["$queryRaw", "$executeRaw"]);

export function storableQuery({
  model,
  operation,
  args,
  query,
}: {
  model?: string;
  operation: string;
  args: unknown;
  query: (args: unknown) => Promise<unknown>;
}): Promise<unknown> {
  if (!model) return query(rawArgs(operation, args));
  if (!args || typeof args !== "object") return query(args);
  const a = args as Record<string, unknown>;
  const out = { ...a };
  const keys = WRITES.has(operation) ? ["where", "data", "create", "update"] : ["where"];
  for (const key of keys) if (a[key] !== undefined) out[key] = storable(a[key]);
  return query(out);
}

/** `$queryRawUnsafe(sql, ...values)` comes as [sql, ...values]; a tagged `$queryRaw` as a Sql. */
function rawArgs(operation: string, args: unknown): unknown {
  if (RAW_UNSAFE.has(operation) && Array.isArray(args)) {
    const [sql, ...values] = args;
    return values.some((v) => pgValue(v) !== v) ? [sql, ...values.map(pgValue)] : args;
  }
  if (RAW_TAGGED.has(operation) && args instanceof Prisma.Sql) {
    const values = args.values.map(pgValue);
    return values.some((v, i) => v !== args.values[i]) ? new Prisma.Sql(args.strings, values) : args;
  }
  return args;
}
