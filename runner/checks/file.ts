// Reads the workspace's quiver.checks.json from the runner's disk (no symbolic link followed)
// and runs one declared check: its exact argv, no shell, through the shell op's launcher (the
// same sandbox, scrubbed environment, process-tree kill and output bounds as `shell`).
import {
  CHECK_LIMITS,
  CHECKS_FILE,
  findCheck,
  parseChecksFile,
  type ChecksListMeta,
} from "../../server/protocol/checks";

export { checkNames, findCheck } from "../../server/protocol/checks";
import type { OpContext, OpResult } from "../ops";
import type { ShellService } from "../exec/shell";
import type { Workspace } from "../workspace/workspace";

export async function readChecks(workspace: Workspace): Promise<ChecksListMeta> {
  let r;
  try {
    r = await workspace.files.readFile(CHECKS_FILE, { follow: false, maxBytes: CHECK_LIMITS.maxFileBytes + 1 });
  } catch (err) {
    return { ok: false, missing: false, error: `${CHECKS_FILE} could not be read: ${(err as Error).message}` };
  }
  if (r.kind === "missing") {
    return {
      ok: false,
      missing: true,
      error: `This workspace declares no checks: there is no ${CHECKS_FILE} at its root. Ask the person to add and commit one, e.g. {"test": {"argv": ["npm", "test"]}}; until then use shell.`,
    };
  }
  if (r.kind !== "file")
    return {
      ok: false,
      missing: false,
      error: `${CHECKS_FILE} is not a regular file (${r.kind}); checks are only read from a plain file`,
    };
  if (r.data.length > CHECK_LIMITS.maxFileBytes)
    return { ok: false, missing: false, error: `${CHECKS_FILE} is larger than ${CHECK_LIMITS.maxFileBytes} bytes` };
  const parsed = parseChecksFile(r.data.toString("utf8"));
  return parsed.ok ? parsed : { ok: false, missing: false, error: parsed.error };
}

/** Runs the named check to its end; ok:false only when it could not start. */
export async function runCheck(
  shell: ShellService,
  name: string,
  ctx: OpContext,
  list?: ChecksListMeta,
): Promise<OpResult> {
  const found = findCheck(list ?? (await readChecks(ctx.workspace)), name);
  if (!found.ok) return found;
  let cwd = ctx.workspace.root;
  if (found.cwd !== undefined && found.cwd !== ".") {
    try {
      const target = await ctx.workspace.resolve(found.cwd, "read");
      if (!target.exists || !ctx.workspace.files.stat(target.rel)?.stats.isDirectory())
        return {
          ok: false,
          output: `check ${name}: cwd ${JSON.stringify(found.cwd)} is not a folder of the workspace`,
        };
      cwd = target.abs;
    } catch (err) {
      return { ok: false, output: `check ${name}: cwd ${JSON.stringify(found.cwd)}: ${(err as Error).message}` };
    }
  }
  const r = await shell.runArgv(
    { argv: found.argv, cwd, timeoutMs: found.timeoutMs, maxOutputBytes: CHECK_LIMITS.maxOutputBytes },
    ctx,
  );
  return { ...r, meta: { ...r.meta, check: name, argv: found.argv, timeoutMs: found.timeoutMs } };
}
