"use client";
// The live preview pane: an address bar (port and path), reload, open in a new tab, the ports
// listening on the runner's machine, and the app in a frame loaded from its preview host
// (`<port>-<session>.localhost`, see server/preview/http.ts). The address bar follows navigation
// inside the frame (its pages report their location: server/preview/inject.ts), and the port and
// path are remembered per session. The frame reloads by itself when the chosen port starts or stops
// listening. A workspace server the preview cannot reach (a command sandboxed without network) is
// named, with what to do instead. Under it, folded away, the dormant in-browser WebContainer
// (webcontainer-line.tsx).
// Every load of the frame, and the new tab, carry a one-minute ticket (./preview-ticket.ts).
import { useEffect, useRef, useState } from "react";
import { PreviewLocation, previewOrigin } from "../../../server/protocol/preview";
import { usePersisted } from "../../_lib/persisted";
import { usePreviewPorts } from "../../_lib/preview-ports";
import { WebContainerLine } from "./webcontainer-line";
import { useIdeCommand } from "../../_lib/ide-bus";
import { openInTabHref, useTicketedSrc } from "./preview-ticket";
import styles from "./preview.module.css";

interface Target {
  port: number | null;
  path: string;
}
const NO_TARGET: Target = { port: null, path: "/" };
const isTarget = (v: unknown): v is Target =>
  !!v &&
  typeof v === "object" &&
  typeof (v as Target).path === "string" &&
  ((v as Target).port === null || Number.isInteger((v as Target).port));

/** `/usr/bin/python3 -m http.server 8123` → `python3 -m http.server` (`words`: how many). */
const shortCommand = (cmd: string, words = 3) => {
  const [first, ...rest] = cmd.split(" ");
  return [first.split("/").pop(), ...rest].slice(0, words).join(" ");
};
/**
 * What the previewed app may do in the pane: what a developer's app needs (scripts, its own origin's
 * cookies and storage, forms, dialogs, downloads, windows of its own that are ordinary windows),
 * and not navigate the IDE's window: without a sandbox, any click in the frame could send the IDE's
 * tab to a look-alike sign-in page (`<a target=_top>`, a form, `top.location`). `allow-same-origin`
 * is the app's own host, never the IDE's: preview hosts are always another origin, so the app
 * cannot reach up and take the sandbox off its frame.
 */
const PREVIEW_SANDBOX = [
  "allow-scripts",
  "allow-same-origin",
  "allow-forms",
  "allow-modals",
  "allow-popups",
  "allow-popups-to-escape-sandbox",
  "allow-downloads",
].join(" ");
const normalPath = (p: string) => (p.trim().startsWith("/") ? p.trim() : `/${p.trim()}`);

/** A place another pane asks the preview to show (a local address Ctrl+clicked in the terminal);
 *  a new object each time, even for the same place. */
export interface PreviewRequest {
  port: number;
  path: string;
}

interface Props {
  sessionId: string;
  visible: boolean;
  request?: PreviewRequest | null;
}

/** The IDE bus's "preview.focus" puts the cursor in the port field. */
export function PreviewPane({ sessionId, visible, request }: Props) {
  const [target, setTarget, targetLoaded] = usePersisted<Target>(`quiver.preview.${sessionId}`, NO_TARGET, isTarget);
  // What the frame was told to load; `target.path` then follows it around the app.
  const [framePath, setFramePath] = useState<string | null>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const [portDraft, setPortDraft] = useState("");
  const [pathDraft, setPathDraft] = useState("/");
  const [nonce, setNonce] = useState(0);
  const portInput = useRef<HTMLInputElement>(null);
  const { ports, error, loaded } = usePreviewPorts(sessionId, visible);

  useEffect(() => {
    setPortDraft(target.port === null ? "" : String(target.port));
    setPathDraft(target.path);
  }, [target]);
  useIdeCommand("preview.focus", () => portInput.current?.focus());
  useEffect(() => {
    if (targetLoaded) setFramePath((p) => p ?? target.path);
  }, [targetLoaded, target.path]);
  // A reload loads where the frame is now, as a browser's does.
  const reload = () => {
    setFramePath(target.path);
    setNonce((n) => n + 1);
  };

  // A server that starts (or stops) on the chosen port shows up without a manual reload; picking
  // another port loads it already, so only a change on the same port reloads.
  const listening = target.port !== null && ports.some((p) => p.port === target.port && !p.sandboxed);
  const seen = useRef<{ port: number | null; listening: boolean } | undefined>(undefined);
  useEffect(() => {
    if (!loaded) return;
    const was = seen.current;
    if (was && was.port === target.port && was.listening !== listening) reload();
    seen.current = { port: target.port, listening };
    // reload reads the current target; running on its own change would reload on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [listening, loaded, target.port]);

  const origin =
    target.port !== null && typeof location !== "undefined"
      ? previewOrigin(location, sessionId, target.port)
      : undefined;
  const url = origin && framePath !== null ? `${origin}${framePath}` : undefined;
  const src = useTicketedSrc(sessionId, target.port, url, nonce);
  const go = (port: number, path: string) => {
    setTarget({ port, path: normalPath(path) });
    setFramePath(normalPath(path));
    setNonce((n) => n + 1);
  };
  // After the remembered target has loaded, or it would replace the one asked for.
  const served = useRef<PreviewRequest | null>(null);
  useEffect(() => {
    if (!targetLoaded || !request || served.current === request) return;
    served.current = request;
    go(request.port, request.path);
    // go only sets state
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [request, targetLoaded]);
  useEffect(() => {
    if (!origin) return;
    const onMessage = (e: MessageEvent) => {
      if (e.origin !== origin || e.source !== frame.current?.contentWindow) return;
      const where = PreviewLocation.safeParse(e.data);
      if (where.success) setTarget((t) => (t.path === where.data.path ? t : { ...t, path: where.data.path }));
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [origin, setTarget]);
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const port = Number(portDraft);
    if (Number.isInteger(port) && port >= 1 && port <= 65_535) go(port, pathDraft);
  };
  const portValid = /^\d{1,5}$/.test(portDraft) && Number(portDraft) >= 1 && Number(portDraft) <= 65_535;
  const mine = ports.filter((p) => p.workspace && !p.sandboxed);
  const walled = ports.filter((p) => p.sandboxed);
  const others = ports.filter((p) => !p.workspace);

  return (
    <div className={styles.pane} data-testid="preview-pane">
      <form className={styles.bar} onSubmit={submit} aria-label="Preview address">
        <span className={styles.host} aria-hidden>
          localhost:
        </span>
        <input
          ref={portInput}
          className={styles.port}
          value={portDraft}
          onChange={(e) => setPortDraft(e.target.value)}
          placeholder="port"
          inputMode="numeric"
          aria-label="Port"
          aria-invalid={portDraft !== "" && !portValid}
          data-testid="preview-port"
        />
        <input
          className={styles.path}
          value={pathDraft}
          onChange={(e) => setPathDraft(e.target.value)}
          aria-label="Path"
          data-testid="preview-path"
        />
        <button type="submit" disabled={!portValid} data-testid="preview-go">
          Go
        </button>
        <button
          type="button"
          onClick={reload}
          disabled={!url}
          aria-label="Reload preview"
          title="Reload"
          data-testid="preview-reload"
        >
          ⟳
        </button>
        <a
          className={styles.open}
          href={url && target.port !== null ? openInTabHref(sessionId, target.port, target.path) : undefined}
          target="_blank"
          rel="noopener noreferrer"
          aria-disabled={!url}
          aria-label="Open preview in a new tab"
          title="Open in a new tab"
          data-testid="preview-open"
        >
          ↗
        </a>
      </form>
      <div className={styles.ports} data-testid="preview-ports" aria-label="Listening ports">
        {error ? (
          <span className={styles.problem}>Ports unavailable: {error}</span>
        ) : !loaded ? (
          <span className="muted">Looking for listening ports…</span>
        ) : mine.length === 0 ? (
          walled.length === 0 && (
            <span className="muted">
              No server of this workspace listens yet. Start one in the terminal (e.g.{" "}
              <code>python3 -m http.server 8000</code>).
            </span>
          )
        ) : (
          mine.map((p) => (
            <button
              key={p.port}
              type="button"
              className={p.port === target.port ? styles.portOn : styles.portBtn}
              onClick={() => go(p.port, "/")}
              title={p.command ?? p.address}
              data-testid="preview-port-item"
              data-port={p.port}
            >
              {p.port}
              {p.command && <span className={styles.cmd}>{shortCommand(p.command)}</span>}
            </button>
          ))
        )}
        {loaded &&
          !error &&
          walled.map((p) => (
            <span key={p.port} className={styles.problem} data-testid="preview-port-sandboxed" data-port={p.port}>
              Port {p.port}
              {p.command && (
                <>
                  {" "}
                  (<code>{shortCommand(p.command, 8)}</code>)
                </>
              )}{" "}
              {p.sandbox === "terminal"
                ? "listens in a terminal without network (this runner's terminals have none), which the preview cannot reach: have the agent run it with network."
                : "listens in a command's sandbox without network, which the preview cannot reach: start it in the terminal, or have the agent run it with network."}
            </span>
          ))}
        {others.length > 0 && (
          <details className={styles.others}>
            <summary>{others.length} other</summary>
            {others.map((p) => (
              <button
                key={p.port}
                type="button"
                className={styles.portBtn}
                onClick={() => go(p.port, "/")}
                data-testid="preview-port-other"
                data-port={p.port}
              >
                {p.port}
              </button>
            ))}
          </details>
        )}
      </div>
      <div className={styles.view}>
        {url ? (
          // credentialless: the IDE's pages are cross-origin isolated (COEP, for the WebContainer),
          // and an app on another origin cannot be expected to send COEP/CORP headers of its own.
          // sandbox: the agent wrote the app; see PREVIEW_SANDBOX.
          src && (
            <iframe
              ref={frame}
              key={`${url}#${nonce}`}
              src={src}
              title="Preview"
              className={styles.frame}
              sandbox={PREVIEW_SANDBOX}
              data-testid="preview-frame"
              data-listening={listening}
              {...({ credentialless: true } as object)}
            />
          )
        ) : (
          <div className={styles.empty}>Pick a port to preview the app served on the runner.</div>
        )}
      </div>
      <WebContainerLine />
    </div>
  );
}
