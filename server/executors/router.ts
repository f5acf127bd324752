// Picks where a call runs. Browser-kind tools go to the page's WebContainer when it is attached
// for the session, in sync with the runner's file version, and the call is read-only; anything
// else (and any browser-kind call the page cannot take) goes to the runner. Server-kind tools
// run in-process and never reach an executor.
import type { Executor } from "./contract";
import type { Tool } from "../tools/tool";

export interface ExecutorRouterDeps {
  runner: Executor;
  browser?: Executor & {
    /** True when the page's file system matches the runner's current file version. */
    inSync?(sessionId: string): boolean;
  };
}

export interface ExecutorRouter {
  pick(tool: Tool, input: unknown, sessionId: string): Executor | undefined;
}

export function createExecutorRouter(deps: ExecutorRouterDeps): ExecutorRouter {
  return {
    pick(tool, input, sessionId) {
      if (tool.executor === "server") return undefined;
      const browser = deps.browser;
      if (
        tool.executor === "browser" &&
        browser &&
        browser.available(sessionId) &&
        (browser.inSync?.(sessionId) ?? false) &&
        tool.isReadOnly(input)
      ) {
        return browser;
      }
      // The runner is returned even when disconnected: its run() fails the call clearly.
      return deps.runner;
    },
  };
}
