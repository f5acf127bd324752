// Per-session read ledger: which files a session has read completely, and at which content
// hash. edit_file/write_file refuse a file the session has not fully read or that changed since.
import { createHash } from "node:crypto";

export const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

interface Entry {
  hash: string;
  totalLines: number;
  /** Known completely (read end to end, or written by this session). */
  full: boolean;
  /** Line ranges read so far at this hash, [start, end] inclusive, 1-based, merged. */
  ranges: Array<[number, number]>;
}

export type LedgerCheck = { ok: true } | { ok: false; reason: string };

export class ReadLedger {
  private readonly sessions = new Map<string, Map<string, Entry>>();

  /** Records that lines [from, to] of `rel` were returned to the session at content `hash`. */
  recordRead(sessionId: string, rel: string, hash: string, totalLines: number, from: number, to: number): void {
    const files = this.files(sessionId);
    let entry = files.get(rel);
    if (!entry || entry.hash !== hash) {
      entry = { hash, totalLines, full: false, ranges: [] };
      files.set(rel, entry);
    }
    entry.ranges = merge([...entry.ranges, [from, to]]);
    if (totalLines === 0 || (entry.ranges.length === 1 && entry.ranges[0][0] <= 1 && entry.ranges[0][1] >= totalLines))
      entry.full = true;
  }

  /** After the session itself wrote `rel`, it knows the content completely. */
  recordWrite(sessionId: string, rel: string, hash: string): void {
    this.files(sessionId).set(rel, { hash, totalLines: 0, full: true, ranges: [] });
  }

  /** The hash the session's last write or read of `rel` saw; undefined once it deleted it. */
  written(sessionId: string, rel: string): string | undefined {
    return this.sessions.get(sessionId)?.get(rel)?.hash;
  }

  forget(sessionId: string, rel: string): void {
    this.sessions.get(sessionId)?.delete(rel);
  }

  check(sessionId: string, rel: string, currentHash: string): LedgerCheck {
    const entry = this.sessions.get(sessionId)?.get(rel);
    if (!entry) return { ok: false, reason: `${rel} has not been read in this session; read it with read_file first` };
    if (entry.hash !== currentHash)
      return {
        ok: false,
        reason: `${rel} changed since it was last read; read it again with read_file before changing it`,
      };
    if (!entry.full)
      return {
        ok: false,
        reason: `${rel} was only partly read; read the remaining lines with read_file (offset/limit) first`,
      };
    return { ok: true };
  }

  dropSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  private files(sessionId: string): Map<string, Entry> {
    let files = this.sessions.get(sessionId);
    if (!files) this.sessions.set(sessionId, (files = new Map()));
    return files;
  }
}

function merge(ranges: Array<[number, number]>): Array<[number, number]> {
  const sorted = ranges.filter(([a, b]) => b >= a).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
