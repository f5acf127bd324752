// The originals of the files a tool_transaction touches, kept in memory and on the runner's disk
// before each edit step is applied, so a failed step — or a runner killed mid-transaction and
// started again — puts every file back byte-exact (content and mode; a created file removed with
// the folders it needed; a deleted file restored). What the transaction last wrote to each file is
// kept too: a file someone else has changed since (the person's save, another session's
// transaction) is left as it is, and the answer says so, rather than rolled back over their work.
// Each transaction has a journal of its own, in a folder per workspace beside the checkpoints'
// shadow repositories (QUIVER_CHECKPOINT_DIR), which sandboxed commands cannot see.
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { checkpointRoot } from "../checkpoints/shadow";
import { readNoFollow, removeDirs } from "../workspace/atomic";
import { sha256 } from "../workspace/ledger";
import type { Workspace } from "../workspace/workspace";

interface Original {
  rel: string;
  /** null: the file did not exist. */
  previous: { data: Buffer; mode: number } | null;
  /** Folders on the way that did not exist, outermost first. */
  dirs: string[];
  /** The sha256 of what the transaction last wrote there (null: it deleted the file); absent
   *  while its step is being applied, when the file is put back whatever it holds. */
  wrote?: string | null;
}

const Stored = z.object({
  root: z.string(),
  sessionId: z.string(),
  files: z.array(
    z.object({
      rel: z.string(),
      data: z.string().nullable(),
      mode: z.number().int(),
      dirs: z.array(z.string()),
      wrote: z.string().nullable().optional(),
    }),
  ),
});

const rootKey = (root: string) => createHash("sha256").update(root).digest("hex").slice(0, 32);

/** The folder of a workspace's transaction journals, one file per transaction. */
export function journalDir(root: string): string {
  return join(checkpointRoot(), "transactions", rootKey(root));
}

/** Where one journal per workspace was kept before (a runner of the previous version's). */
const legacyJournal = (root: string) => join(checkpointRoot(), "transactions", `${rootKey(root)}.json`);

function missingDirs(ws: Workspace, rel: string): string[] {
  const parts = rel.split("/").slice(0, -1);
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    if (!ws.files.lstat(dir)) out.push(dir);
  }
  return out;
}

/** What a step's remember changed in the journal. */
export interface StepMark {
  added: string[];
  wrote: Map<string, string | null | undefined>;
}

export class Journal {
  private readonly originals = new Map<string, Original>();
  private readonly file: string;

  constructor(
    private readonly ws: Workspace,
    private readonly sessionId: string,
  ) {
    // Named by start time first: recovery undoes the latest transaction first.
    this.file = join(
      journalDir(ws.root),
      `${Date.now().toString().padStart(15, "0")}-${randomBytes(6).toString("hex")}.json`,
    );
  }

  get paths(): string[] {
    return [...this.originals.keys()];
  }

  /** Keeps each file's original (the first time it is seen), on disk before the caller writes;
   *  answers what to take back should the step write nothing (notApplied). */
  async remember(rels: string[]): Promise<StepMark> {
    const mark: StepMark = { added: [], wrote: new Map() };
    for (const rel of rels) {
      const known = this.originals.get(rel);
      if (known) {
        mark.wrote.set(rel, known.wrote);
        delete known.wrote;
        continue;
      }
      this.originals.set(rel, {
        rel,
        previous: await readNoFollow(this.ws.files, rel),
        dirs: missingDirs(this.ws, rel),
      });
      mark.added.push(rel);
    }
    if (rels.length > 0) this.save();
    return mark;
  }

  /** The step's op refused and wrote nothing: its files are as the journal had them before it
   *  (one first seen in it is not the transaction's to put back: someone else may have written it). */
  notApplied(mark: StepMark): void {
    for (const rel of mark.added) this.originals.delete(rel);
    for (const [rel, wrote] of mark.wrote) {
      const o = this.originals.get(rel)!;
      if (wrote === undefined) delete o.wrote;
      else o.wrote = wrote;
    }
    this.save();
  }

  /** What the step just applied wrote to each of `rels`, as the read ledger recorded its write (a
   *  save landing a moment later must not be taken for the transaction's). */
  wrote(rels: string[]): void {
    for (const rel of rels) this.originals.get(rel)!.wrote = this.ws.ledger.written(this.sessionId, rel) ?? null;
    this.save();
  }

  private save(): void {
    const body = JSON.stringify({
      root: this.ws.root,
      sessionId: this.sessionId,
      files: [...this.originals.values()].map((o) => ({
        rel: o.rel,
        data: o.previous ? o.previous.data.toString("base64") : null,
        mode: o.previous?.mode ?? 0,
        dirs: o.dirs,
        ...(o.wrote !== undefined ? { wrote: o.wrote } : {}),
      })),
    });
    mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, body, { mode: 0o600 });
      const fd = openSync(tmp, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.file);
    } catch (err) {
      // A full disk cuts the temp short: left there, it holds the disk's last room (and is never read).
      try {
        rmSync(tmp, { force: true });
      } catch {
        /* the failure below says what went wrong, not this */
      }
      throw err;
    }
  }

  /** The transaction held: the originals are no longer needed. */
  commit(): void {
    rmSync(this.file, { force: true });
  }

  /** Puts every file back; returns what was done to each, for the model. */
  async rollback(): Promise<string[]> {
    const done = await restore(this.ws, this.sessionId, [...this.originals.values()]);
    this.commit();
    return done;
  }
}

async function restore(ws: Workspace, sessionId: string, originals: Original[]): Promise<string[]> {
  const done: string[] = [];
  const back: string[] = [];
  for (const o of [...originals].reverse()) {
    const now = await readNoFollow(ws.files, o.rel).catch(() => undefined);
    if (o.wrote !== undefined && (now === undefined || (now ? sha256(now.data) : null) !== o.wrote)) {
      done.push(`${o.rel} left as it is (changed by someone else since this transaction wrote it)`);
      continue;
    }
    back.push(o.rel);
    if (o.previous) {
      const same = now && now.mode === o.previous.mode && now.data.equals(o.previous.data);
      if (!same) await ws.files.writeFile(o.rel, o.previous.data, o.previous.mode);
      ws.ledger.recordWrite(sessionId, o.rel, sha256(o.previous.data));
      done.push(`${o.rel} ${now === null ? "recreated" : same ? "unchanged" : "restored"}`);
    } else {
      if (ws.files.lstat(o.rel)) ws.files.unlink(o.rel);
      removeDirs(ws.files, o.dirs);
      ws.ledger.forget(sessionId, o.rel);
      done.push(`${o.rel} removed`);
    }
  }
  ws.markChanged(back);
  return done;
}

/** At start: the journals left by a runner that died mid-transaction are rolled back, the
 *  latest transaction first. */
export async function recoverJournal(ws: Workspace, log: (line: string) => void): Promise<string[]> {
  const dir = journalDir(ws.root);
  const files = [
    ...listed(dir)
      .filter((e) => e.isFile() && e.name.endsWith(".json"))
      .map((e) => join(dir, e.name))
      .sort()
      .reverse(),
    legacyJournal(ws.root),
  ].filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile());
  const done: string[] = [];
  for (const file of files) done.push(...(await recoverOne(ws, file, log)));
  return done;
}

function listed(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

async function recoverOne(ws: Workspace, file: string, log: (line: string) => void): Promise<string[]> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const parsed = Stored.safeParse(
    (() => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success || parsed.data.root !== ws.root) {
    log(`transaction journal ${file} is unreadable or not this workspace's; left in place`);
    return [];
  }
  const originals = parsed.data.files.map((f) => ({
    rel: f.rel,
    previous: f.data === null ? null : { data: Buffer.from(f.data, "base64"), mode: f.mode },
    dirs: f.dirs,
    ...(f.wrote !== undefined ? { wrote: f.wrote } : {}),
  }));
  const done = await restore(ws, parsed.data.sessionId, originals);
  rmSync(file, { force: true });
  log(`rolled back a transaction the runner did not finish: ${done.join(", ")}`);
  return done;
}
