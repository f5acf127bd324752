// Spills: the full bytes of tool results that were cut for the model, kept for 7 days so
// retrieve_tool_result can bring back any slice. A streamed output (a command's, up to the
// output ceiling) is written piece by piece through `open` and never held whole; line and
// pattern reads walk the pieces one at a time. Bytes are stored exactly (NUL and invalid
// UTF-8 included) on SQLite and PostgreSQL; slices are read with the database's own substring
// so a 20 KB read of a 10 MB spill does not load 10 MB. Bytes travel through the driver under
// Prisma (see spill-blobs.ts); metadata and clean-up through Prisma. Ids are 128-bit random,
// so unique across server processes without coordination.
import { createHash, randomBytes } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import RE2 from "re2";
import type { Db } from "../db";
import { openBlobChannel, SPILL_CHUNK } from "./spill-blobs";
import { charStartAtOrBefore, decode } from "../pipeline/truncate";
import type { SpillLines } from "../tools/tool";
import { logFn } from "../log";

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
      : /\\[1-9]|backreference|escape sequence/.test(why)
        ? " RE2 has no backreferences (\\1) or possessive/atomic groups."
        : "";
    throw new SpillQueryError(
      `pattern is not a valid regular expression for RE2, the linear-time engine used here: ${why}.${hint} Rewrite it without those constructs.`,
    );
  }
}

// Matching looks at the first 100,000 characters of a line, so a 10 MB line is never held whole.
const MATCH_CHARS = 100_000;

/** Collects the lines a query asks for, one line at a time. */
class LineSelector {
  private n = 0;
  private out: string[] = [];
  private bytes = 0;
  private count = 0;
  private truncated = false;
  private readonly regex: { test(line: string): boolean } | undefined;

  constructor(private readonly q: Omit<LineQuery, "sessionId">) {
    this.regex = q.pattern === undefined ? undefined : compilePattern(q.pattern);
  }

  /** `line`: at most MATCH_CHARS characters of a line `length` characters long. */
  line(line: string, length: number): void {
    const n = ++this.n;
    if (n < Math.max(1, this.q.start ?? 1) || (this.q.end !== undefined && n > this.q.end)) return;
    if (this.regex && !this.regex.test(line)) return;
    this.count++;
    if (this.truncated) return;
    const shown =
      length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… (${length - MAX_LINE_CHARS} more characters)` : line;
    const entry = `${n}\t${shown}`;
    const size = Buffer.byteLength(entry) + 1;
    if (this.bytes + size > this.q.maxBytes) {
      this.truncated = true;
      return;
    }
    this.bytes += size;
    this.out.push(entry);
  }

  result(totalBytes: number): SpillLines {
    return { text: this.out.join("\n"), totalBytes, totalLines: this.n, count: this.count, truncated: this.truncated };
  }
}

/** Splits decoded pieces into lines as `text.split("\n")` would (a final empty line dropped), holding one piece at a time. */
async function scanLines(pieces: AsyncIterable<Uint8Array>, sel: LineSelector): Promise<void> {
  const decoder = new StringDecoder("utf8");
  let carry = "";
  let carryLength = 0;
  let emitted = 0;
  const add = (s: string) => {
    const parts = s.split("\n");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (carry.length < MATCH_CHARS) carry += p.slice(0, MATCH_CHARS - carry.length);
      carryLength += p.length;
      if (i === parts.length - 1) break;
      sel.line(carry, carryLength);
      emitted++;
      carry = "";
      carryLength = 0;
    }
  };
  for await (const piece of pieces) add(decoder.write(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength)));
  add(decoder.end());
  if (carryLength > 0 || emitted === 0) sel.line(carry, carryLength);
}

/** Line range or pattern search over decoded text; lines longer than 2,000 characters are clipped. */
export function selectLines(text: string, q: Omit<LineQuery, "sessionId">, totalBytes: number): SpillLines {
  const sel = new LineSelector(q);
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) sel.line(line.length > MATCH_CHARS ? line.slice(0, MATCH_CHARS) : line, line.length);
  return sel.result(totalBytes);
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
  /** A spill written piece by piece as an output streams; readable once finished. */
  open(input: { sessionId: string; toolCallId?: string; now?: Date }): Promise<SpillWriter>;
  deleteExpired(now?: Date): Promise<number>;
}

export interface SpillWriter {
  readonly ref: string;
  /** Bytes appended so far. */
  readonly size: number;
  /** Appends bytes; they reach the database in pieces of SPILL_CHUNK, never held whole. */
  append(bytes: Uint8Array): Promise<void>;
  /** Writes what is left and makes the spill readable. */
  finish(): Promise<StoredSpill>;
  /** Deletes what was written. */
  abort(): Promise<void>;
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
    // An unfinished streamed spill has no digest yet and is not readable.
    const row = await db.spill.findFirst({
      where: { id: ref, sessionId, expiresAt: { gt: new Date() }, sha256: { not: "" } },
      select: { size: true },
    });
    return row ?? undefined;
  }

  async function bytes(ref: string, sessionId: string): Promise<Uint8Array | undefined> {
    if (!(await live(ref, sessionId))) return undefined;
    const parts: Uint8Array[] = [];
    for await (const p of blobs.pieces(ref)) parts.push(p);
    return new Uint8Array(Buffer.concat(parts));
  }

  return {
    async store({ sessionId, toolCallId, bytes, now = new Date() }) {
      const ref = newSpillRef();
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      await blobs.insert({
        id: ref,
        sessionId,
        toolCallId: toolCallId ?? null,
        bytes,
        size: bytes.byteLength,
        sha256,
        createdAt: now,
        expiresAt: new Date(now.getTime() + SPILL_TTL_MS),
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
      const row = await live(ref, sessionId);
      if (!row) return undefined;
      const sel = new LineSelector(q);
      await scanLines(blobs.pieces(ref), sel);
      return sel.result(row.size);
    },

    async open({ sessionId, toolCallId, now = new Date() }) {
      const ref = newSpillRef();
      await blobs.insert({
        id: ref,
        sessionId,
        toolCallId: toolCallId ?? null,
        bytes: new Uint8Array(0),
        size: 0,
        sha256: "",
        createdAt: now,
        expiresAt: new Date(now.getTime() + SPILL_TTL_MS),
      });
      const hash = createHash("sha256");
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let written = 0;
      const flush = async (all: boolean) => {
        while (pendingBytes >= SPILL_CHUNK || (all && pendingBytes > 0)) {
          const joined = Buffer.concat(pending);
          const piece = joined.subarray(0, SPILL_CHUNK);
          const rest = joined.subarray(piece.length);
          pending = rest.length ? [rest] : [];
          pendingBytes = rest.length;
          await blobs.appendChunk(ref, written, piece);
          written += piece.length;
        }
      };
      return {
        ref,
        get size() {
          return written + pendingBytes;
        },
        async append(bytes) {
          hash.update(bytes);
          pending.push(Buffer.from(bytes));
          pendingBytes += bytes.length;
          await flush(false);
        },
        async finish() {
          await flush(true);
          const sha256 = hash.digest("hex");
          await blobs.seal(ref, written, sha256);
          return { ref, size: written, sha256 };
        },
        async abort() {
          pending = [];
          pendingBytes = 0;
          await db.spill.deleteMany({ where: { id: ref } });
        },
      };
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
  const log = opts.log ?? logFn("spills", "warn");
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
