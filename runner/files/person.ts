// The person's own file operations from the IDE: read whole files for the editor, save with an
// optimistic hash check, create folders, rename, delete. Confined like the tools (resolve
// refuses paths outside the workspace, symlinks out, .git; every operation walks its path through
// the workspace's descriptor, workspace/fs-at), but they do not need a prior read
// and are not held to the agent's diff budget: the person is not the agent. Outside git
// they record what each file held before (a folder's files too, within limits), for the Changes panel.
import { PERSON_FILE_LIMITS, PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { applyChange, readNoFollow } from "../workspace/atomic";
import type { LeftOut } from "../workspace/diff";
import { sha256 } from "../workspace/ledger";
import { defineOp, type OpTable } from "../ops";
import { looksBinary, utf8Text } from "./text";
import { ideChanges, ideOriginal } from "./changes";
import { ideFind } from "./find";
import { ideCommit } from "./commit";
import { ideReplace } from "./replace";

const ideRead = defineOp({
  input: PERSON_FILE_OPS.ide_read,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "read");
    const file = target.exists
      ? await ctx.workspace.files.readFile(target.rel, { follow: true, maxBytes: PERSON_FILE_LIMITS.maxOpenBytes })
      : null;
    if (!file || file.kind === "missing") return { ok: false, output: `${input.path} does not exist` };
    if (file.kind === "dir") return { ok: false, output: `${target.rel} is a folder` };
    if (file.kind === "large")
      return {
        ok: false,
        output: `${target.rel} is ${file.size} bytes, larger than the editor opens (${PERSON_FILE_LIMITS.maxOpenBytes})`,
      };
    if (file.kind !== "file") return { ok: false, output: `${target.rel} is not a regular file` };
    const data = file.data;
    if (looksBinary(data)) return { ok: false, output: `${target.rel} is a binary file; the editor shows text only` };
    const text = utf8Text(data);
    if (text === undefined)
      return { ok: false, output: `${target.rel} is not UTF-8 text; the editor opens UTF-8 files only` };
    return { ok: true, output: text, meta: { path: target.rel, hash: sha256(data), size: data.length } };
  },
});

const ideReadBytes = defineOp({
  input: PERSON_FILE_OPS.ide_read_bytes,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "read");
    const file = target.exists
      ? await ctx.workspace.files.readFile(target.rel, { follow: true, maxBytes: PERSON_FILE_LIMITS.maxRawBytes })
      : null;
    if (!file || file.kind === "missing") return { ok: false, output: `${input.path} does not exist` };
    if (file.kind === "large")
      return {
        ok: false,
        output: `${target.rel} is ${file.size} bytes, more than ${PERSON_FILE_LIMITS.maxRawBytes} can be shown or downloaded here`,
      };
    if (file.kind !== "file") return { ok: false, output: `${target.rel} is not a file` };
    const data = file.data;
    return { ok: true, output: data.toString("base64"), meta: { path: target.rel, size: data.length } };
  },
});

const ideWrite = defineOp({
  input: PERSON_FILE_OPS.ide_write,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "write");
    const before = target.exists ? await readNoFollow(ctx.workspace.files, target.rel) : null;
    const current = before ? sha256(before.data) : null;
    if (input.expectHash !== undefined && input.expectHash !== current) {
      const output =
        current === null
          ? `${target.rel} was deleted since you opened it`
          : input.expectHash === null
            ? `${target.rel} already exists`
            : `${target.rel} changed on disk since you opened it`;
      return { ok: false, output, meta: { conflict: true, hash: current } };
    }
    const data = Buffer.from(input.content, "utf8");
    await applyChange(ctx.workspace.files, target.rel, data, before);
    // Outside git, the Changes panel compares with what each file held before its first write.
    ctx.workspace.diff.rememberBaseline(target.rel, before?.data ?? null);
    ctx.filesChanged([target.rel]);
    return {
      ok: true,
      output: `saved ${target.rel}`,
      meta: { path: target.rel, hash: sha256(data), size: data.length },
    };
  },
});

const ideWriteBytes = defineOp({
  input: PERSON_FILE_OPS.ide_write_bytes,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "write");
    const data = Buffer.from(input.base64, "base64");
    if (data.length > PERSON_FILE_LIMITS.maxUploadBytes)
      return {
        ok: false,
        output: `${target.rel} is ${data.length} bytes, more than ${PERSON_FILE_LIMITS.maxUploadBytes} can be uploaded`,
      };
    if (target.exists && ctx.workspace.files.lstat(target.rel)?.stats.isDirectory())
      return { ok: false, output: `${target.rel} is a folder` };
    if (target.exists && !input.overwrite)
      return { ok: false, output: `${target.rel} already exists`, meta: { path: target.rel, exists: true } };
    const before = target.exists ? await readNoFollow(ctx.workspace.files, target.rel) : null;
    await applyChange(ctx.workspace.files, target.rel, data, before);
    ctx.workspace.diff.rememberBaseline(target.rel, before?.data ?? null);
    ctx.filesChanged([target.rel]);
    return { ok: true, output: `uploaded ${target.rel}`, meta: { path: target.rel, size: data.length } };
  },
});

const ideMkdir = defineOp({
  input: PERSON_FILE_OPS.ide_mkdir,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "write");
    if (target.exists) return { ok: false, output: `${target.rel} already exists` };
    ctx.workspace.files.mkdir(target.rel);
    ctx.filesChanged([target.rel]);
    return { ok: true, output: `created ${target.rel}/` };
  },
});

const ideRename = defineOp({
  input: PERSON_FILE_OPS.ide_rename,
  async run(input, ctx) {
    const from = await ctx.workspace.resolve(input.from, "write");
    const to = await ctx.workspace.resolve(input.to, "write");
    if (!from.exists) return { ok: false, output: `${input.from} does not exist` };
    if (to.exists) return { ok: false, output: `${to.rel} already exists; choose another name` };
    if (to.rel.startsWith(`${from.rel}/`)) return { ok: false, output: `cannot move ${from.rel} into itself` };
    const isFile = ctx.workspace.files.lstat(from.rel)?.stats.isFile() ?? false;
    const moved = isFile ? await readNoFollow(ctx.workspace.files, from.rel).catch(() => null) : null;
    const unrecorded = isFile ? null : await ctx.workspace.diff.keepFolder(from.rel, to.rel);
    ctx.workspace.files.rename(from.rel, to.rel);
    if (moved) {
      ctx.workspace.diff.rememberBaseline(from.rel, moved.data);
      ctx.workspace.diff.rememberBaseline(to.rel, null);
    }
    ctx.filesChanged([from.rel, to.rel]);
    return {
      ok: true,
      output: `renamed ${from.rel} to ${to.rel}${unrecordedNote(unrecorded)}`,
      meta: { from: from.rel, to: to.rel },
    };
  },
});

const ideDelete = defineOp({
  input: PERSON_FILE_OPS.ide_delete,
  async run(input, ctx) {
    const target = await ctx.workspace.resolve(input.path, "write");
    if (!target.exists) return { ok: false, output: `${input.path} does not exist` };
    const isFile = ctx.workspace.files.lstat(target.rel)?.stats.isFile() ?? false;
    const removed = isFile ? await readNoFollow(ctx.workspace.files, target.rel).catch(() => null) : null;
    const unrecorded = isFile ? null : await ctx.workspace.diff.keepFolder(target.rel);
    // Atomic from the person's view: a runner killed midway leaves the folder whole or gone.
    await ctx.workspace.files.removeTreeAtomic(target.rel);
    if (removed) ctx.workspace.diff.rememberBaseline(target.rel, removed.data);
    ctx.filesChanged([target.rel]);
    return { ok: true, output: `deleted ${target.rel}${unrecordedNote(unrecorded)}` };
  },
});

/** Outside git, a folder too large to keep in full: the files past the limit cannot be discarded
 *  back. One not looked through whole (too many entries, too deep) has a count that is a floor. */
function unrecordedNote(left: LeftOut | null): string {
  if (!left || (left.files === 0 && !left.more)) return "";
  if (!left.more) return ` (${left.files} of its files were too many to keep for Changes)`;
  if (left.files > 0) return ` (at least ${left.files} of its files were too many to keep for Changes)`;
  return " (it was too large or too deep to look through whole: some of its files may not be kept for Changes)";
}

export const personFileOps: OpTable = {
  ide_read: ideRead,
  ide_read_bytes: ideReadBytes,
  ide_write: ideWrite,
  ide_write_bytes: ideWriteBytes,
  ide_mkdir: ideMkdir,
  ide_rename: ideRename,
  ide_delete: ideDelete,
  ide_changes: ideChanges,
  ide_original: ideOriginal,
  ide_find: ideFind,
  ide_commit: ideCommit,
  ide_replace: ideReplace,
};
