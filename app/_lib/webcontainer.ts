// The in-browser WebContainer (StackBlitz's @webcontainer/api): the one place that says what
// Quiver does with it today.
// Does: on the person's request ("Try it", folded under the preview on the IDE's pages), boot one
// WebContainer in the page, once per page, within a timeout, and say why when it cannot (the page
// is not cross-origin isolated, StackBlitz's servers are unreachable, the boot failed).
// Does not: mount the workspace's files, run a dev server, serve the preview, or run any tool.
// The server's executor router (server/executors/router.ts) can send read-only "browser" tools to
// a page's WebContainer, but no browser executor is attached (server/parts.ts passes the runner
// only), so every call goes to the runner and every preview through it.
// Needs: a cross-origin isolated page. Only the IDE's pages (/s/…) send COOP/COEP for it
// (next.config.mjs); the rest of the site sends neither. Never booted on load: the attempt
// contacts a host off this machine, and offline it neither resolves nor rejects, hence its own
// timeout.

export type WebContainerBoot = { ok: true; instance: unknown } | { ok: false; reason: string };

/** Races `start` against a timer; a hang becomes a clear reason instead of a spinner forever. */
export async function bootWithTimeout(start: () => Promise<unknown>, timeoutMs: number): Promise<WebContainerBoot> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<WebContainerBoot>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          ok: false,
          reason: `no answer from WebContainer in ${Math.round(timeoutMs / 1000)} s (it needs StackBlitz's servers: is this machine offline?)`,
        }),
      timeoutMs,
    );
  });
  const booted = start().then(
    (instance): WebContainerBoot => ({ ok: true, instance }),
    (err: unknown): WebContainerBoot => ({
      ok: false,
      reason: `WebContainer failed to boot: ${(err as Error)?.message ?? String(err)}`,
    }),
  );
  try {
    return await Promise.race([booted, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

let attempt: Promise<WebContainerBoot> | undefined;

export function bootWebContainer(timeoutMs = 10_000): Promise<WebContainerBoot> {
  if (typeof window === "undefined") return Promise.resolve({ ok: false, reason: "not in a browser" });
  if (!window.crossOriginIsolated) {
    return Promise.resolve({
      ok: false,
      reason: "this page is not cross-origin isolated (COOP/COEP headers), which WebContainer requires",
    });
  }
  attempt ??= bootWithTimeout(async () => (await import("@webcontainer/api")).WebContainer.boot(), timeoutMs);
  return attempt;
}
