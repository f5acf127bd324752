"use client";
// One line under the preview saying whether the in-browser WebContainer runs the preview, and
// why not. The boot is tried only when the person asks: it contacts StackBlitz, and offline it
// would never finish (app/_lib/webcontainer.ts gives it a timeout).
import { useState } from "react";
import { bootWebContainer } from "../../_lib/webcontainer";
import styles from "./preview.module.css";

type State = { kind: "idle" } | { kind: "booting" } | { kind: "booted" } | { kind: "unavailable"; reason: string };

export function WebContainerLine() {
  const [state, setState] = useState<State>({ kind: "idle" });
  const attempt = () => {
    setState({ kind: "booting" });
    void bootWebContainer().then((r) => setState(r.ok ? { kind: "booted" } : { kind: "unavailable", reason: r.reason }));
  };
  return (
    <div className={styles.wc} role="status" data-testid="preview-webcontainer" data-state={state.kind}>
      {state.kind === "idle" && (
        <>
          Previewing through the runner. The in-browser WebContainer is not started (it needs StackBlitz&apos;s servers).{" "}
          <button type="button" className={styles.link} onClick={attempt}>Try it</button>
        </>
      )}
      {state.kind === "booting" && "Booting the WebContainer…"}
      {state.kind === "unavailable" && `WebContainer unavailable: ${state.reason}. Previewing through the runner.`}
      {state.kind === "booted" && "WebContainer booted, but running the app's dev server in it is not wired yet: previewing through the runner."}
    </div>
  );
}
