// QUIVER_PRICES: the operator's price table, given as the JSON itself or as the path of a JSON
// file, read and checked once at boot (env.ts) so a typo stops the start with its place named.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { PriceTable } from "./prices";

export type PricesResult = { ok: true; table: PriceTable } | { ok: false; message: string };

export function parsePrices(
  value: string,
  readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): PricesResult {
  const inline = value.trimStart().startsWith("{");
  let text = value;
  if (!inline) {
    try {
      text = readFile(resolve(value));
    } catch (err) {
      return {
        ok: false,
        message: `cannot read the price file ${resolve(value)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      };
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `${inline ? "" : `${resolve(value)}: `}not JSON (${(err as Error).message})` };
  }
  const parsed = PriceTable.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      message: `${issue.path.join(".") || "the table"}: ${issue.message} (expected { "model": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75 } } in dollars per million tokens)`,
    };
  }
  return { ok: true, table: parsed.data };
}
