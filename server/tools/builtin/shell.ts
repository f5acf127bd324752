// shell: runs a command in the workspace on the runner (bash with the login environment,
// sandboxed there), or reads more from / stops a command an earlier call left running. Plainly
// read-only lines run without asking — their git commands rewritten so the repository's own
// configuration cannot run a program (shell-git.ts); dangerous ones and network access are
// always asked about.
import { readFileSync } from "node:fs";
import { SHELL_LIMITS, ShellInput, ShellResultMeta } from "../../protocol/exec-ops";
import { respond } from "../errors";
import { defineTool, type ToolResult } from "../tool";
import { analyseShell } from "../../shell/analyse";
import { isDangerousCommand } from "../../shell/danger";
import { isReadOnlyCommand } from "./shell-safety";
import { neutraliseGit } from "./shell-git";

// Time for the runner to kill a process tree and drain its pipes after the command's own limit.
const MARGIN_MS = 30_000;

const isPoll = (i: ShellInput) => i.session_id !== undefined;
const safeRead = (i: ShellInput) =>
  i.command !== undefined && i.network !== true && isReadOnlyCommand(i.command) && !isDangerousCommand(i.command);

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** The status line the model reads first; the output follows it. */
export function shellHeader(m: ShellResultMeta): string {
  if (m.running) {
    return (
      `Still running after ${seconds(m.durationMs)} (session_id ${m.sessionHandle}). ` +
      `Call shell with {"session_id":"${m.sessionHandle}"} for more output and the exit code, or add "kill": true to stop it.`
    );
  }
  const how = m.signal ? ` (${m.signal})` : "";
  const code = m.exitCode === null ? `signal ${m.signal ?? "unknown"}` : `${m.exitCode}${how}`;
  const head =
    m.stopReason === "timeout"
      ? `Timed out after ${seconds(m.durationMs)}; the command and everything it started were killed. Exit code: ${code}`
      : m.stopReason === "cancelled"
        ? `Cancelled after ${seconds(m.durationMs)}; the command and everything it started were killed.`
        : m.stopReason === "killed"
          ? `Stopped on request after ${seconds(m.durationMs)}.`
          : `Exit code: ${code} · ${seconds(m.durationMs)}`;
  // With `stored`, nothing was omitted on the way: what the pipeline cuts, its marker says.
  return m.omittedBytes > 0 && !m.stored ? `${head} · ${m.omittedBytes} bytes of output omitted in the middle` : head;
}

export const shellTool = defineTool({
  name: "shell",
  description: readFileSync(new URL("./shell.txt", import.meta.url), "utf8").trim(),
  input: ShellInput,
  capabilities: ["ExecutesCode"],
  executor: "runner",
  fieldAliases: { cmd: "command", workdir: "cwd", timeout: "timeout_ms", handle: "session_id" },
  approvalFor(i) {
    if (isPoll(i)) return "auto"; // reading or stopping a command that was already allowed to run
    if (i.network === true || isDangerousCommand(i.command ?? "")) return "required";
    return safeRead(i) ? "auto" : undefined;
  },
  isReadOnly: (i) => (isPoll(i) ? !i.kill : safeRead(i)),
  isConcurrencySafe: (i) => !isPoll(i) && safeRead(i),
  isDestructive: (i) => !isPoll(i) && (i.command === undefined || !safeRead(i)),
  isOpenWorld: (i) => i.network === true,
  summarize(i) {
    if (i.session_id !== undefined) return i.kill ? `Stop ${i.session_id}` : `Read output of ${i.session_id}`;
    const line = (i.command ?? "").split("\n")[0];
    return `$ ${line}${(i.command ?? "").includes("\n") ? " …" : ""}${i.network ? " (with network)" : ""}`;
  },
  async execute(input, ctx): Promise<ToolResult> {
    const waitMs = isPoll(input)
      ? input.kill
        ? 0
        : (input.yield_time_ms ?? SHELL_LIMITS.defaultPollYieldMs)
      : Math.min(input.yield_time_ms ?? Infinity, input.timeout_ms ?? SHELL_LIMITS.defaultTimeoutMs);
    // The line runs as classified: a read-only one with its git neutralised, whoever asked.
    const run =
      !isPoll(input) && safeRead(input)
        ? { ...input, command: neutraliseGit(input.command!, analyseShell(input.command!).commands) }
        : input;
    const r = await ctx.remote(run, {
      onProgress: (c) => ctx.progress(c),
      timeoutMs: waitMs + MARGIN_MS,
      stream: true,
    });
    if (!r.ok) throw respond(r.output, r.meta);
    const parsed = ShellResultMeta.safeParse(r.meta);
    if (!parsed.success) throw respond(`the runner answered without a command status: ${r.output.slice(0, 500)}`);
    const meta = parsed.data;
    // Streamed whole: the pipeline cuts it for the model from what it stored (pipeline/stream.ts).
    const streamed = r.streamed && r.streamed.size > 0 ? r.streamed : undefined;
    const body = streamed ? undefined : r.output.length > 0 ? r.output : "(no output)";
    return {
      output: body === undefined ? shellHeader(meta) : `${shellHeader(meta)}\n${body}`,
      ...(streamed ? { stream: streamed } : {}),
      kind: "shell",
      isError: !meta.running && meta.exitCode !== 0,
      network: meta.network,
      meta,
    };
  },
});
