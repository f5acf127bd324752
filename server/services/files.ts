// The person's file operations for the IDE (tree, search, open, save, new, rename, delete). Each one is a
// request to the session's runner, which enforces workspace confinement; saving by the person is
// not an agent tool call, so it never passes through the pipeline or asks for approval.
import { randomUUID } from "node:crypto";
import type { ExecResult, Executor } from "../executors/contract";
import { FILE_LIMITS } from "../protocol/file-ops";
import {
  PersonChanges,
  PersonCommit,
  PersonFileMeta,
  PersonFound,
  PersonOriginal,
  PersonRaw,
  PersonReplaced,
  PersonUploaded,
  PersonWriteConflict,
  type PersonFileInput,
  type PersonFileOp,
} from "../protocol/person-file-ops";

export type FileErrorKind = "not_found" | "conflict" | "invalid" | "unavailable";

/** A refusal the person can act on; `message` is the runner's own sentence. */
export class FileOpError extends Error {
  constructor(
    readonly kind: FileErrorKind,
    message: string,
    readonly currentHash?: string | null,
  ) {
    super(message);
    this.name = "FileOpError";
  }
}

import type { TreeEntry } from "../protocol/ide-types";
import { readQuotedName } from "../protocol/listed-names";
export type { TreeEntry };

export interface SearchQuery {
  query: string;
  regex?: boolean;
  /** Default: smart case (exact only when the query has capitals), as ripgrep and VS Code. */
  caseSensitive?: boolean;
  /** Only files matching this glob (`*.ts`, `src/**`). */
  glob?: string;
}

export interface SearchResults {
  files: { path: string; matches: { line: number; text: string }[] }[];
  matches: number;
  /** Stopped at SEARCH_MAX matching lines. */
  truncated: boolean;
}

/** Matching lines a search from the IDE returns at most. */
export const SEARCH_MAX = 1000;

export interface FileService {
  /** The workspace breadth first up to FILE_LIMITS.listMax entries, .gitignore honoured; with
   *  `folder`, that folder's own entries only (the tree reads a folder the whole listing missed). */
  tree(sessionId: string, folder?: string): Promise<{ entries: TreeEntry[]; truncated: boolean }>;
  /** Text (or regex) across the workspace, .gitignore honoured, grouped by file in path order. */
  search(sessionId: string, query: SearchQuery): Promise<SearchResults>;
  read(sessionId: string, path: string): Promise<{ path: string; content: string; hash: string }>;
  /** Any file's bytes as base64, up to PERSON_FILE_LIMITS.maxRawBytes (image preview, download). */
  raw(sessionId: string, path: string): Promise<{ path: string; base64: string; size: number }>;
  /** expectHash: what the editor opened (null for a new file; omitted to overwrite regardless). */
  save(
    sessionId: string,
    path: string,
    content: string,
    expectHash?: string | null,
  ): Promise<{ path: string; hash: string }>;
  /** A file from the person's computer; an existing one is a conflict unless `overwrite`. */
  upload(sessionId: string, path: string, base64: string, overwrite?: boolean): Promise<{ path: string; size: number }>;
  mkdir(sessionId: string, path: string): Promise<void>;
  rename(sessionId: string, from: string, to: string): Promise<void>;
  remove(sessionId: string, path: string): Promise<void>;
  /** Files whose path holds `query`'s characters in order (quick open past the tree's listing). */
  find(sessionId: string, query: string): Promise<PersonFound>;
  /** Replace in files: each line of `paths` as `query` matched it, with `replacement`. */
  replace(sessionId: string, query: SearchQuery & { replacement: string; paths: string[] }): Promise<PersonReplaced>;
  /** Commits every change inside the workspace folder (git only; the runner explains refusals). */
  commit(sessionId: string, message: string): Promise<PersonCommit>;
  /** The workspace's uncommitted changes, file by file. */
  changes(sessionId: string): Promise<PersonChanges>;
  /** A changed file's earlier version (HEAD, or before the runner's first write); content null: it is new, or binary. */
  original(sessionId: string, path: string): Promise<{ path: string; content: string | null; binary: boolean }>;
}

const TIMEOUT_MS = 30_000;

export function createFileService(runner: Pick<Executor, "run">): FileService {
  async function call(sessionId: string, op: string, input: unknown): Promise<ExecResult> {
    try {
      return await runner.run({
        sessionId,
        callId: `ide_${randomUUID()}`,
        op,
        input,
        deadline: Date.now() + TIMEOUT_MS,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new FileOpError("unavailable", (err as Error).message);
    }
  }

  async function person<K extends PersonFileOp>(
    sessionId: string,
    op: K,
    input: PersonFileInput<K>,
  ): Promise<ExecResult> {
    const r = await call(sessionId, op, input);
    if (r.ok) return r;
    const conflict = PersonWriteConflict.safeParse(r.meta);
    if (conflict.success) throw new FileOpError("conflict", r.output, conflict.data.hash);
    throw new FileOpError(/does not exist/.test(r.output) ? "not_found" : "invalid", r.output);
  }

  return {
    async tree(sessionId, folder) {
      const r = await call(
        sessionId,
        "list_files",
        folder ? { path: folder, depth: 1, limit: FILE_LIMITS.listMax } : { limit: FILE_LIMITS.listMax },
      );
      if (!r.ok) throw new FileOpError(/does not exist/.test(r.output) ? "not_found" : "invalid", r.output);
      return parseListing(r.output);
    },
    async search(sessionId, q) {
      const input = {
        pattern: q.query,
        max_results: SEARCH_MAX,
        ...(q.regex ? { regex: true } : {}),
        ...(q.caseSensitive !== undefined ? { case_sensitive: q.caseSensitive } : {}),
        ...(q.glob ? { glob: q.glob } : {}),
      };
      const r = await call(sessionId, "search_text", input);
      if (!r.ok) throw new FileOpError("invalid", r.output.replace(/^search failed: /, ""));
      return parseSearch(r.output);
    },
    async read(sessionId, path) {
      const r = await person(sessionId, "ide_read", { path });
      const meta = PersonFileMeta.parse(r.meta);
      return { path: meta.path, content: r.output, hash: meta.hash };
    },
    async raw(sessionId, path) {
      const r = await person(sessionId, "ide_read_bytes", { path });
      const meta = PersonRaw.parse(r.meta);
      return { path: meta.path, base64: r.output, size: meta.size };
    },
    async save(sessionId, path, content, expectHash) {
      const r = await person(sessionId, "ide_write", {
        path,
        content,
        ...(expectHash !== undefined ? { expectHash } : {}),
      });
      const meta = PersonFileMeta.parse(r.meta);
      return { path: meta.path, hash: meta.hash };
    },
    async upload(sessionId, path, base64, overwrite) {
      const r = await call(sessionId, "ide_write_bytes", { path, base64, ...(overwrite ? { overwrite: true } : {}) });
      if (!r.ok) {
        // A refusal (outside the workspace, inside .git) carries no meta: the runner's sentence says why.
        if (PersonUploaded.safeParse(r.meta).data?.exists) throw new FileOpError("conflict", r.output);
        throw new FileOpError("invalid", r.output);
      }
      const meta = PersonUploaded.parse(r.meta);
      return { path: meta.path, size: meta.size ?? 0 };
    },
    async mkdir(sessionId, path) {
      await person(sessionId, "ide_mkdir", { path });
    },
    async rename(sessionId, from, to) {
      await person(sessionId, "ide_rename", { from, to });
    },
    async remove(sessionId, path) {
      await person(sessionId, "ide_delete", { path });
    },
    async find(sessionId, query) {
      return PersonFound.parse((await person(sessionId, "ide_find", { query })).meta);
    },
    async replace(sessionId, q) {
      const input = {
        pattern: q.query,
        replacement: q.replacement,
        paths: q.paths,
        ...(q.regex ? { regex: true } : {}),
        ...(q.caseSensitive !== undefined ? { caseSensitive: q.caseSensitive } : {}),
      };
      return PersonReplaced.parse((await person(sessionId, "ide_replace", input)).meta);
    },
    async commit(sessionId, message) {
      return PersonCommit.parse((await person(sessionId, "ide_commit", { message })).meta);
    },
    async changes(sessionId) {
      return PersonChanges.parse((await person(sessionId, "ide_changes", {})).meta);
    },
    async original(sessionId, path) {
      const r = await person(sessionId, "ide_original", { path });
      const meta = PersonOriginal.parse(r.meta);
      return { path, content: meta.existed && !meta.binary ? r.output : null, binary: meta.binary === true };
    },
  };
}

/** list_files output: one path per line, folders end in "/", links in "@", a bracketed note when cut. */
export function parseListing(output: string): { entries: TreeEntry[]; truncated: boolean } {
  const entries: TreeEntry[] = [];
  let truncated = false;
  for (const line of output.split("\n")) {
    if (!line || line === "(empty directory)") continue;
    if (line.startsWith("[listing stopped")) {
      truncated = true;
      continue;
    }
    // A quoted name (listed-names.ts) is followed by its suffix alone; a malformed one names nothing.
    const name = line.startsWith('"') ? readQuotedName(line) : splitPlain(line);
    if (!name) continue;
    const type = name.rest === "/" ? "dir" : name.rest === "@" ? "link" : name.rest === "" ? "file" : undefined;
    if (type) entries.push({ path: name.name, type });
  }
  return { entries, truncated };
}

/** A plain listing line: its path and the suffix that says a folder or a link. */
const splitPlain = (line: string) =>
  /[/@]$/.test(line) ? { name: line.slice(0, -1), rest: line.slice(-1) } : { name: line, rest: "" };

/** search_text output: `path:line:text` per matching line, "No matches.", and a bracketed note when cut. */
export function parseSearch(output: string): SearchResults {
  const files: SearchResults["files"] = [];
  let matches = 0;
  let truncated = false;
  for (const line of output.split("\n")) {
    if (line.startsWith("[results stopped")) truncated = true;
    const quoted = line.startsWith('"') ? readQuotedName(line) : undefined;
    const m = quoted ? /^:(\d+):(.*)$/.exec(quoted.rest) : /^(.+?):(\d+):(.*)$/.exec(line);
    if (!m) continue;
    const [path, n, text] = quoted ? [quoted.name, m[1], m[2]] : [m[1], m[2], m[3]];
    if (files.at(-1)?.path !== path) files.push({ path, matches: [] });
    files.at(-1)!.matches.push({ line: Number(n), text });
    matches++;
  }
  return { files, matches, truncated };
}
