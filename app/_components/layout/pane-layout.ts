// How the IDE's panes share the window: the person's wishes (sizes, which panes are open, which
// they opened last) fitted to the window. The editor never gets less than EDITOR_MIN: side panes
// first give up their extra width (down to their minimums, in proportion to what each has over
// it), and when that is not enough the side bar or the preview, whichever was shown longer ago,
// collapses (as if hidden; the chat only when nothing else is left) until the rest fits. Nothing
// is squeezed below its minimum. Pure, so it is tested without a browser.

export type SidePane = "side" | "preview" | "chat";
export const SIDE_PANES: readonly SidePane[] = ["side", "preview", "chat"];

export interface LayoutPrefs {
  side: number;
  chat: number;
  preview: number;
  /** The bottom panel's (terminal's) height. */
  panel: number;
  sideOpen: boolean;
  chatOpen: boolean;
  previewOpen: boolean;
  panelOpen: boolean;
  /** The side panes, opened longest ago first: the first open one collapses first. */
  recent: SidePane[];
}

export const DEFAULT_PREFS: LayoutPrefs = {
  side: 240,
  chat: 400,
  preview: 480,
  panel: 220,
  sideOpen: true,
  chatOpen: true,
  previewOpen: false,
  panelOpen: true,
  recent: ["preview", "side", "chat"],
};

export const MIN = { side: 160, chat: 280, preview: 320, panel: 100 } as const;
export const MAX = { side: 600, chat: 900, preview: 1400, panel: 800 } as const;
export const EDITOR_MIN = 400;
/** Rows the editor keeps above the bottom panel (tabs, a banner, a few lines). */
export const EDITOR_MIN_H = 160;
export const SPLIT = 4;
/** The top bar and the status bar. */
export const CHROME_H = 36 + 24;

export interface Fitted {
  /** Widths of the side panes (0 when not shown) and the panel's height (0 when not shown). */
  side: number;
  chat: number;
  preview: number;
  panel: number;
  editor: number;
  shown: Record<SidePane | "panel", boolean>;
  /** Open by the person's choice but folded away for lack of room. */
  collapsed: (SidePane | "panel")[];
}

export function fitLayout(p: LayoutPrefs, view: { width: number; height: number }, can: { preview: boolean }): Fitted {
  const wanted: Record<SidePane, boolean> = {
    side: p.sideOpen,
    chat: p.chatOpen,
    preview: p.previewOpen && can.preview,
  };
  // The chat folds last: it is where the agent asks for approvals and answers.
  const order = [
    ...p.recent.filter((x) => x !== "chat" && SIDE_PANES.includes(x)),
    ...SIDE_PANES.filter((x) => x !== "chat" && !p.recent.includes(x)),
    "chat" as const,
  ];
  const shown = { ...wanted };
  const collapsed: Fitted["collapsed"] = [];
  const open = () => SIDE_PANES.filter((x) => shown[x]);
  const need = () => EDITOR_MIN + open().reduce((n, x) => n + MIN[x] + SPLIT, 0);
  for (const x of order) {
    if (need() <= view.width) break;
    if (!shown[x]) continue;
    shown[x] = false;
    collapsed.push(x);
  }
  const size: Record<SidePane, number> = { side: 0, chat: 0, preview: 0 };
  const panes = open();
  for (const x of panes) size[x] = Math.min(MAX[x], Math.max(MIN[x], p[x]));
  const room = view.width - EDITOR_MIN - panes.length * SPLIT;
  const over = panes.reduce((n, x) => n + size[x], 0) - room;
  if (over > 0) {
    const slack = panes.reduce((n, x) => n + size[x] - MIN[x], 0);
    for (const x of panes) size[x] = slack > 0 ? Math.floor(size[x] - (over * (size[x] - MIN[x])) / slack) : MIN[x];
  }
  const panelRoom = view.height - CHROME_H - EDITOR_MIN_H - SPLIT;
  const panelShown = p.panelOpen && panelRoom >= MIN.panel;
  if (p.panelOpen && !panelShown) collapsed.push("panel");
  const panel = panelShown ? Math.min(panelRoom, Math.max(MIN.panel, Math.min(MAX.panel, p.panel))) : 0;
  const editor = view.width - panes.reduce((n, x) => n + size[x] + SPLIT, 0);
  return { ...size, panel, editor, shown: { ...shown, panel: panelShown }, collapsed };
}

/** The largest size a drag may give `pane` now: no more than leaves the editor its minimum. */
export function dragMax(f: Fitted, pane: SidePane | "panel", view: { height: number }): number {
  if (pane === "panel") return Math.max(MIN.panel, Math.min(MAX.panel, view.height - CHROME_H - EDITOR_MIN_H - SPLIT));
  return Math.max(MIN[pane], Math.min(MAX[pane], f[pane] + f.editor - EDITOR_MIN));
}

/** Shows or hides a pane as its toggle does: a pane folded away for room counts as hidden, and
 *  showing one makes it the last to collapse. */
export function togglePane(p: LayoutPrefs, f: Fitted, pane: SidePane | "panel"): LayoutPrefs {
  if (pane === "panel") return { ...p, panelOpen: !f.shown.panel };
  return showPane(p, pane, !f.shown[pane]);
}

export function showPane(p: LayoutPrefs, pane: SidePane, show: boolean): LayoutPrefs {
  const key = `${pane}Open` as const;
  return { ...p, [key]: show, recent: show ? [...p.recent.filter((x) => x !== pane), pane] : p.recent };
}

export function isPrefs(v: unknown): v is LayoutPrefs {
  if (!v || typeof v !== "object") return false;
  const o = v as Record<string, unknown>;
  return (
    ["side", "chat", "preview", "panel"].every((k) => typeof o[k] === "number" && Number.isFinite(o[k])) &&
    ["sideOpen", "chatOpen", "previewOpen", "panelOpen"].every((k) => typeof o[k] === "boolean") &&
    Array.isArray(o.recent) &&
    o.recent.every((x) => SIDE_PANES.includes(x as SidePane))
  );
}
