// Spills: the full bytes of tool results that were cut for the model, kept for 7 days so
// retrieve_tool_result can bring back any slice. Bytes are stored exactly (NUL and invalid
// UTF-8 included) on SQLite and PostgreSQL; slices are read with the database's own substring
// so a 20 KB read of a 10 MB spill does not load 10 MB. Bytes travel through the driver under
// Prisma (see spill-blobs.ts); metadata and clean-up through Prisma. Ids are 128-bit random,
// so unique across server processes without coordination.
import { createHash, randomBytes } from "node:crypto";
import RE2 from "re2";
import type { Db } from "../db";
import { openBlobChannel } from "./spill-blobs";
import { charStartAtOrBefore, decode } from "../pipeline/truncate";
import type { SpillLines } from "../tools/tool";

export interface LineQuery {
  sessionId: string;
  start?: number;
  end?: number;
  pattern?: string;
  maxBytes: number;
}

export class SpillQueryError extends Error {}

const MAX_LINE_CHARS = 2000;

/**
 * A pattern for RE2, which matches in time linear in the input: a pattern from the model can
 * never stall the server's main thread with backtracking. What RE2 does not support is said.
 */
export function compilePattern(pattern: string): { test(line: string): boolean } {
  try {
    return new RE2(pattern, "u");
  } catch (e) {
    const why = (e as Error).message;
    const hint = /\(\?<?[=!]|lookahead|lookbehind/.test(pattern + why)
      ? " RE2 has no lookahead or lookbehind ((?=…), (?!…), (?<=…), (?<!…))."
      : /\\[1-9]|backreference|escape sequence/.test(why) ? " RE2 has no backreferences (\\1) or possessive/atomic groups." : "";
    throw new SpillQueryError(`pattern is not a valid regular expression for RE2, the linear-time engine used here: ${why}.${hint} Rewrite it without those constructs.`);
  }
}

/** Line range or pattern search over decoded text; lines longer than 2,000 characters are clipped. */
export function selectLines(text: string, q: Omit<LineQuery, "sessionId">, totalBytes: number): SpillLines {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const regex = q.pattern === undefined ? undefined : compilePattern(q.pattern);
  const first = Math.max(1, q.start ?? 1);
  const last = Math.min(lines.length, q.end ?? lines.length);
  const out: string[] = [];
  let bytes = 0;
  let count = 0;
  let truncated = false;
  for (let n = first; n <= last; n++) {
    const line = lines[n - 1];
    if (regex && !regex.test(line.length > 100_000 ? line.slice(0, 100_000) : line)) continue;
    count++;
    if (truncated) continue;
    const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… (${line.length - MAX_LINE_CHARS} more characters)` : line;
    const entry = `${n}\t${shown}`;
    const size = Buffer.byteLength(entry) + 1;
    if (bytes + size > q.maxBytes) {
      truncated = true;
      continue;
    }
    bytes += size;
    out.push(entry);
  }
  return { text: out.join("\n"), totalBytes, totalLines: lines.length, count, truncated };
}

export const SPILL_TTL_MS = 7 * 24 * 3600 * 1000;
export const CLEANUP_INTERVAL_MS = 3600 * 1000;

export interface StoredSpill {
  ref: string;
  size: number;
  sha256: string;
}

export interface SpillSlice {
  text: string;
  /** Actual byte range returned, snapped to character boundaries. */
  offset: number;
  end: number;
  totalBytes: number;
}

export interface SpillStore {
  store(input: { sessionId: string; toolCallId?: string; bytes: Uint8Array; now?: Date }): Promise<StoredSpill>;
  read(ref: string, range: { sessionId: string; offset: number; length: number }): Promise<SpillSlice | undefined>;
  /** The whole spill; undefined when missing or expired. */
  bytes(ref: string, sessionId: string): Promise<Uint8Array | undefined>;
  /** Whole lines by number range, or the lines matching a pattern (see SpillService.lines). */
  lines(ref: string, query: LineQuery): Promise<SpillLines | undefined>;
  deleteExpired(now?: Date): Promise<number>;
}

export function newSpillRef(): string {
  return `sp_${randomBytes(16).toString("hex")}`;
}

export function isSpillRef(ref: string): boolean {
  return /^sp_[0-9a-f]{32}$/.test(ref);
}

// Continuation bytes a slice may need to step back over, plus slack to find the next boundary.
const SLACK = 4;

export function createSpillStore(db: Db, url: string): SpillStore & { close(): Promise<void> } {
  const blobs = openBlobChannel(url);

  async function live(ref: string, sessionId: string) {
    if (!isSpillRef(ref)) return undefined;
    const row = await db.spill.findFirst({ where: { id: ref, sessionId, expiresAt: { gt: new Date() } }, select: { size: true } });
    return row ?? undefined;
  }

  async function bytes(ref: string, sessionId: string): Promise<Uint8Array | undefined> {
    return (await live(ref, sessionId)) ? blobs.whole(ref) : undefined;
  }

  return {
    async store({ sessionId, toolCallId, bytes, now = new Date() }) {
      const ref = newSpillRef();
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      await blobs.insert({
        id: ref, sessionId, toolCallId: toolCallId ?? null, bytes, size: bytes.byteLength, sha256,
        createdAt: now, expiresAt: new Date(now.getTime() + SPILL_TTL_MS),
      });
      return { ref, size: bytes.byteLength, sha256 };
    },

    async read(ref, { sessionId, offset, length }) {
      const row = await live(ref, sessionId);
      if (!row) return undefined;
      const start = Math.max(0, Math.min(Math.floor(offset), row.size));
      const end = Math.min(row.size, start + Math.max(0, Math.floor(length)));
      const from = Math.max(0, start - SLACK);
      const window = await blobs.slice(ref, from, end - from + SLACK);
      // Snap both ends back to character starts so no character is split.
      const s = charStartAtOrBefore(window, start - from);
      const e = end >= row.size ? Math.min(window.length, row.size - from) : charStartAtOrBefore(window, end - from);
      let e2 = Math.max(s, e);
      // A length shorter than the character at `start` still returns that one character.
      if (e2 === s && s < window.length) {
        e2 = s + 1;
        while (e2 < window.length && e2 - s < 4 && (window[e2] & 0xc0) === 0x80) e2++;
      }
      return { text: decode(window.subarray(s, e2)), offset: from + s, end: from + e2, totalBytes: row.size };
    },

    bytes,

    async lines(ref, { sessionId, ...q }) {
      const all = await bytes(ref, sessionId);
      if (!all) return undefined;
      return selectLines(decode(all), q, all.length);
    },

    async deleteExpired(now = new Date()) {
      const r = await db.spill.deleteMany({ where: { expiresAt: { lte: now } } });
      return r.count;
    },

    close: () => blobs.close(),
  };
}

/**
 * Deletes expired spills now and then every `intervalMs` (hourly by default). Returns the stop
 * function; the caller (server/main.ts) owns the timer.
 */
export function startSpillCleanup(
  store: Pick<SpillStore, "deleteExpired">,
  opts: { intervalMs?: number; log?: (message: string, error?: unknown) => void } = {},
): { ready: Promise<number>; stop(): void } {
  const log = opts.log ?? ((m, e) => console.warn(m, e ?? ""));
  const run = () =>
    store.deleteExpired().catch((e) => {
      log("spill cleanup failed", e);
      return 0;
    });
  const ready = run();
  const timer = setInterval(run, opts.intervalMs ?? CLEANUP_INTERVAL_MS);
  timer.unref();
  return { ready, stop: () => clearInterval(timer) };
}
