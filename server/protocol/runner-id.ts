// The id a runner gives itself when it is not told one: its host and the folder it serves. The
// server derives the local runner's id the same way to bind it to that runner's token, so the
// two sides share this one function and cannot drift apart (a drift would refuse the runner).
import { createHash } from "node:crypto";

/** `<hostname>-<first 8 hex of sha256(served folder's real path)>`. */
export function defaultRunnerId(host: string, servedRealPath: string): string {
  return `${host}-${createHash("sha256").update(servedRealPath).digest("hex").slice(0, 8)}`;
}
