// The WebContainer boot attempt: preview and read-only tools may run in the browser when it boots.
// Boot needs a cross-origin isolated page and StackBlitz's servers; offline it neither resolves
// nor rejects, so the attempt has its own timeout and says why it gave up. Only one WebContainer
// may boot per page, so every caller shares the one attempt. It is started by the person (the
// preview pane's button), never on load: the attempt itself contacts a host off this machine.

export type WebContainerBoot = { ok: true; instance: unknown } | { ok: false; reason: string };

/** Races `start` against a timer; a hang becomes a clear reason instead of a spinner forever. */
export async function bootWithTimeout(start: () => Promise<unknown>, timeoutMs: number): Promise<WebContainerBoot> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<WebContainerBoot>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, reason: `no answer from WebContainer in ${Math.round(timeoutMs / 1000)} s (it needs StackBlitz's servers: is this machine offline?)` }),
      timeoutMs,
    );
  });
  const booted = start().then(
    (instance): WebContainerBoot => ({ ok: true, instance }),
    (err: unknown): WebContainerBoot => ({ ok: false, reason: `WebContainer failed to boot: ${(err as Error)?.message ?? String(err)}` }),
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
    return Promise.resolve({ ok: false, reason: "this page is not cross-origin isolated (COOP/COEP headers), which WebContainer requires" });
  }
  attempt ??= bootWithTimeout(async () => (await import("@webcontainer/api")).WebContainer.boot(), timeoutMs);
  return attempt;
}
