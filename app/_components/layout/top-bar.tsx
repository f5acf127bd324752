"use client";
// The IDE's top bar: the brand (home), the session's title, then for a member the session
// switcher, the agent's state, then on the right for a member the session's cost, the org, Share,
// and one toggle per pane with its key. A toggle is
// pressed while its pane is on screen: a pane folded away for room (pane-layout.ts) shows
// unpressed, and pressing it brings that pane back (another gives way).
import Link from "next/link";
import { SessionTitle } from "../session-title";
import { OrgSwitcher } from "../org-switcher";
import { SessionSwitcher } from "../sessions/session-switcher";
import { CostTotal } from "../sessions/cost-total";
import type { SessionState } from "../../_lib/session-state";
import type { Pane } from "./use-ide-layout";
import styles from "../ide-frame.module.css";

const TOGGLES: { pane: Pane; label: string; keys: string; aria: string; title: string; member?: boolean }[] = [
  { pane: "side", label: "Files", keys: "Ctrl+B", aria: "Control+B", title: "Side bar: files, search, changes" },
  { pane: "panel", label: "Terminal", keys: "Ctrl+J", aria: "Control+J", title: "Bottom panel: the terminal" },
  { pane: "preview", label: "Preview", keys: "Ctrl+Alt+P", aria: "Control+Alt+P", title: "Live preview", member: true },
  { pane: "chat", label: "Chat", keys: "Ctrl+Alt+B", aria: "Control+Alt+B", title: "Chat with the agent" },
];
const TEST_IDS: Record<Pane, string> = {
  side: "toggle-side",
  panel: "toggle-panel",
  preview: "toggle-preview",
  chat: "toggle-chat",
};

interface Props {
  sessionId: string;
  title?: string;
  kind?: "member" | "viewer" | "refused";
  running: boolean;
  shown: Record<Pane, boolean>;
  onToggle(pane: Pane): void;
  onShare(): void;
  /** The session's events (its cost follows their usage). */
  state: SessionState;
}

export function TopBar({ sessionId, title, kind, running, shown, onToggle, onShare, state }: Props) {
  const member = kind === "member";
  const readOnly = !member;
  return (
    <header className={styles.top}>
      <Link href="/" className={styles.brand}>
        Quiver
      </Link>
      <SessionTitle sessionId={sessionId} title={title} editable={member} />
      {member && <SessionSwitcher sessionId={sessionId} />}
      {running && (
        <span className={styles.working}>
          {readOnly ? (
            "Agent working…"
          ) : (
            <>
              Agent working… <kbd>Esc</kbd> stops
            </>
          )}
        </span>
      )}
      {kind === "viewer" && (
        <span className={styles.shared} data-testid="readonly-banner">
          Shared read-only
        </span>
      )}
      <span className={styles.topEnd}>
        {member && <CostTotal sessionId={sessionId} state={state} />}
        {member && <OrgSwitcher />}
        {member && (
          <button type="button" className={styles.toggle} onClick={onShare} data-testid="share-open">
            Share
          </button>
        )}
        <span className={styles.paneToggles} role="group" aria-label="Panes">
          {TOGGLES.filter((t) => !t.member || member).map((t) => (
            <button
              key={t.pane}
              type="button"
              className={styles.toggle}
              aria-pressed={shown[t.pane]}
              aria-keyshortcuts={t.aria}
              title={`${t.title} (${t.keys})`}
              onClick={() => onToggle(t.pane)}
              data-testid={TEST_IDS[t.pane]}
            >
              {t.label}
            </button>
          ))}
        </span>
      </span>
    </header>
  );
}
