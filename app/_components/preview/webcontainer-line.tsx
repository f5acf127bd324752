"use client";
// The in-browser WebContainer's place under the preview: folded away (a details toggle) and shown
// only where it could boot at all, i.e. on a cross-origin isolated page (the IDE's pages send the
// COOP/COEP headers for it: next.config.mjs). What it does today is exactly what
// app/_lib/webcontainer.ts says: it boots when asked and nothing runs in it yet. The boot is tried
// only when the person asks: it contacts StackBlitz, and offline it would never finish.
import { useEffect, useState } from "react";
import { bootWebContainer } from "../../_lib/webcontainer";
import styles from "./preview.module.css";

type State = { kind: "idle" } | { kind: "booting" } | { kind: "booted" } | { kind: "unavailable"; reason: string };

export function WebContainerLine() {
  const [state, setState] = useState<State>({ kind: "idle" });
  // Known after mount only (the server render has no window): nothing until then.
  const [isolated, setIsolated] = useState(false);
  useEffect(() => setIsolated(window.crossOriginIsolated), []);
  if (!isolated) return null;
  const attempt = () => {
    setState({ kind: "booting" });
    void bootWebContainer().then((r) =>
      setState(r.ok ? { kind: "booted" } : { kind: "unavailable", reason: r.reason }),
    );
  };
  return (
    <details
      className={styles.wc}
      data-testid="preview-webcontainer"
      data-state={state.kind}
      open={state.kind !== "idle"}
    >
      <summary>Previewing through the runner</summary>
      <div role="status">
        {state.kind === "idle" && (
          <>
            An in-browser WebContainer could boot in this page instead (it needs StackBlitz&apos;s servers); nothing
            runs in it yet.{" "}
            <button type="button" className={styles.link} onClick={attempt}>
              Try it
            </button>
          </>
        )}
        {state.kind === "booting" && "Booting the WebContainer…"}
        {state.kind === "unavailable" && `WebContainer unavailable: ${state.reason}. Previewing through the runner.`}
        {state.kind === "booted" &&
          "WebContainer booted, but running the app's dev server in it is not wired yet: previewing through the runner."}
      </div>
    </details>
  );
}
