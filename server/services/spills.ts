// Spills: the full bytes of tool results that were cut for the model, kept for 7 days so
// retrieve_tool_result can bring back any slice. A streamed output (a command's, up to the
// output ceiling) is written piece by piece through `open` and never held whole; line and
// pattern reads walk the pieces one at a time. Bytes are stored exactly (NUL and invalid
// UTF-8 included) on SQLite and PostgreSQL; slices are read with the database's own substring
// so a 20 KB read of a 10 MB spill does not load 10 MB. Bytes travel through the driver under
// Prisma (see spill-blobs.ts); metadata and clean-up through Prisma. Ids are 128-bit random,
// so unique across server processes without coordination.
//
// What is kept is bounded, so a model printing 64 MiB call after call cannot fill the shared
// database's disk: a session's spills hold at most QUIVER_OUTPUT_SESSION_BYTES (1 GiB by default;
// checked and written in one step per piece, spill-blobs.ts says how), and nothing is written
// while the data folder has less than QUIVER_MIN_FREE_DISK_MB free (measured as /api/health does).
// A spill that does not fit is refused with a SpillRefused whose message tells the model why; a
// streamed one refused midway is deleted, never left half-stored. Spills already stored stay.
import { createHash, randomBytes } from "node:crypto";
import { statfsSync } from "node:fs";
import { resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import RE2 from "re2";
import type { Db } from "../db";
import { openBlobChannel, SPILL_CHUNK, type Bounded } from "./spill-blobs";
import { charStartAtOrBefore, decode } from "../pipeline/truncate";
import type { SpillLines } from "../tools/tool";
import { logFn } from "../log";
import { env } from "../env";

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
/** QUIVER_OUTPUT_SESSION_BYTES's default: the bytes of full outputs one session keeps at once. */
export const DEFAULT_SESSION_SPILL_BYTES = 1024 * 1024 * 1024;

export interface SpillLimits {
  /** Bytes a session's spills may hold together (QUIVER_OUTPUT_SESSION_BYTES). */
  sessionBytes: number;
  /** The data folder whose free space is checked, and the floor (QUIVER_MIN_FREE_DISK_MB). */
  dataDir: string;
  minFreeMb: number;
}

/** The limits the environment sets; the server's own start already refused a bad value. */
function configuredLimits(): SpillLimits {
  try {
    const e = env();
    return { sessionBytes: e.QUIVER_OUTPUT_SESSION_BYTES, dataDir: e.dataDir, minFreeMb: e.QUIVER_MIN_FREE_DISK_MB };
  } catch {
    return { sessionBytes: DEFAULT_SESSION_SPILL_BYTES, dataDir: resolve(".quiver"), minFreeMb: 500 };
  }
}

// Every refusal's text starts so; renderStreamed tells it from a storage failure by it.
const NOT_KEPT = "The full output was not kept";

/** A spill not stored because of a bound (not a failure); its message is meant for the model. */
export class SpillRefused extends Error {
  constructor(
    readonly reason: "session" | "disk",
    message: string,
  ) {
    super(message);
  }
}

/** The model-facing note of a refusal's message (StreamedOutput.storeError), or undefined for a failure. */
export function refusalNote(storeError: string | undefined): string | undefined {
  return storeError?.startsWith(NOT_KEPT) ? storeError : undefined;
}

const fmtBytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(1)} GiB`
    : n >= 1024 ** 2
      ? `${(n / 1024 ** 2).toFixed(1)} MiB`
      : `${n.toLocaleString("en-US")} bytes`;
const RERUN = "Rerun with narrower output (filter, head, tail, grep) if you need the omitted part.";

function overSession(held: number, limit: number): SpillRefused {
  return new SpillRefused(
    "session",
    `${NOT_KEPT}: keeping it would take this session's stored full outputs past the ${fmtBytes(limit)} they may hold together (the server's QUIVER_OUTPUT_SESSION_BYTES; ${fmtBytes(held)} held when it stopped). ` +
      `Stored outputs expire ${SPILL_TTL_MS / (24 * 3600 * 1000)} days after they were kept; the ones kept before remain retrievable. ${RERUN}`,
  );
}

/** Free MB of the data folder's disk when below the floor, as /api/health measures it (services/health.ts). */
function lowDisk(limits: SpillLimits): number | undefined {
  let freeMb: number;
  try {
    const s = statfsSync(limits.dataDir);
    freeMb = Math.floor((s.bavail * s.bsize) / (1024 * 1024));
  } catch {
    // A data folder that cannot be measured is /api/health's to report; storing goes on.
    return undefined;
  }
  return freeMb < limits.minFreeMb ? freeMb : undefined;
}

function checkDisk(limits: SpillLimits): void {
  const freeMb = lowDisk(limits);
  if (freeMb !== undefined)
    throw new SpillRefused(
      "disk",
      `${NOT_KEPT}: the server's disk is low (${freeMb} MB free, below the ${limits.minFreeMb} MB it keeps free, QUIVER_MIN_FREE_DISK_MB), so no full outputs are stored until space is freed. ${RERUN}`,
    );
}

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

/** `limits`: by default the environment's (QUIVER_OUTPUT_SESSION_BYTES, the data folder, QUIVER_MIN_FREE_DISK_MB). */
export function createSpillStore(
  db: Db,
  url: string,
  limits: SpillLimits = configuredLimits(),
): SpillStore & { close(): Promise<void> } {
  const blobs = openBlobChannel(url);

  /** Writes within the session's bound; once over, the session's expired spills (not yet cleaned up) go and it is tried again. */
  async function bounded(sessionId: string, write: () => Promise<Bounded>): Promise<void> {
    checkDisk(limits);
    let r = await write();
    if (r.ok) return;
    const gone = await db.spill.deleteMany({ where: { sessionId, expiresAt: { lte: new Date() } } });
    if (gone.count > 0) r = await write();
    if (!r.ok) throw overSession(r.held, limits.sessionBytes);
  }

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
      const row = {
        id: ref,
        sessionId,
        toolCallId: toolCallId ?? null,
        bytes,
        size: bytes.byteLength,
        sha256,
        createdAt: now,
        expiresAt: new Date(now.getTime() + SPILL_TTL_MS),
      };
      await bounded(sessionId, () => blobs.insert(row, limits.sessionBytes));
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
      const row = {
        id: ref,
        sessionId,
        toolCallId: toolCallId ?? null,
        bytes: new Uint8Array(0),
        size: 0,
        sha256: "",
        createdAt: now,
        expiresAt: new Date(now.getTime() + SPILL_TTL_MS),
      };
      // Opened while the session is still under its bound (a session at it exactly is refused here).
      await bounded(sessionId, () => blobs.insert(row, limits.sessionBytes - 1));
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
          try {
            // Each piece is checked: the spill stops growing at the bound or a low disk, and goes whole.
            await bounded(sessionId, () => blobs.appendChunk(ref, sessionId, written, piece, limits.sessionBytes));
          } catch (e) {
            if (e instanceof SpillRefused) await abort();
            throw e;
          }
          written += piece.length;
        }
      };
      const abort = async () => {
        pending = [];
        pendingBytes = 0;
        await db.spill.deleteMany({ where: { id: ref } });
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
        abort,
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
