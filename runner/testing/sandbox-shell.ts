// A test file's shell service in the warm sandbox (when there is one) over a temp workspace, made
// before the file's tests and disposed after them: kept apart from exec.ts, which the benchmarks
// import outside vitest.
import { afterAll, beforeAll } from "vitest";
import { sandboxInfo } from "../exec/sandbox";
import { ShellService, type ShellOptions } from "../exec/shell";
import { opContext, tempWorkspace } from "./exec";

/** The shell and a context for its runs; `extra` adds limits or a log. */
export function useSandboxShell(extra: Partial<ShellOptions> = {}) {
  let ws: Awaited<ReturnType<typeof tempWorkspace>> | undefined;
  let shell: ShellService | undefined;
  beforeAll(async () => {
    ws = await tempWorkspace();
    shell = new ShellService({
      sandbox: sandboxInfo("auto"),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" },
      allowNetwork: false,
      ...extra,
    });
  });
  afterAll(async () => {
    await shell?.dispose();
    await ws?.cleanup();
  });
  return {
    get shell() {
      return shell!;
    },
    get ctx() {
      return opContext(ws!.workspace);
    },
  };
}
