import { describe, expect, it } from "vitest";
import {
  DEFAULT_PREFS,
  EDITOR_MIN,
  MIN,
  SPLIT,
  dragMax,
  fitLayout,
  isPrefs,
  togglePane,
  type LayoutPrefs,
} from "./pane-layout";

const member = { preview: true };
const withPreview = (p: Partial<LayoutPrefs> = {}): LayoutPrefs => ({
  ...DEFAULT_PREFS,
  previewOpen: true,
  recent: ["side", "chat", "preview"],
  ...p,
});
const total = (f: ReturnType<typeof fitLayout>) =>
  f.editor + (["side", "chat", "preview"] as const).reduce((n, x) => n + (f.shown[x] ? f[x] + SPLIT : 0), 0);

describe("fitting the panes to the window", () => {
  it("at 1920 px everything fits at the sizes asked for", () => {
    const f = fitLayout(withPreview(), { width: 1920, height: 1080 }, member);
    expect(f).toMatchObject({ side: 240, chat: 400, preview: 480, panel: 220, collapsed: [] });
    expect(f.editor).toBe(1920 - 240 - 400 - 480 - 3 * SPLIT);
  });

  it("at 1024 px with the preview open, the pane opened longest ago folds away and the editor keeps its minimum", () => {
    const f = fitLayout(withPreview(), { width: 1024, height: 700 }, member);
    expect(f.collapsed).toEqual(["side"]);
    expect(f.shown).toMatchObject({ side: false, chat: true, preview: true, panel: true });
    expect(f.editor).toBeGreaterThanOrEqual(EDITOR_MIN);
    expect(f.chat).toBeGreaterThanOrEqual(MIN.chat);
    expect(f.preview).toBeGreaterThanOrEqual(MIN.preview);
    expect(total(f)).toBe(1024);
  });

  it("shrinks before it collapses: at 1024 px without the preview nothing folds", () => {
    const f = fitLayout(DEFAULT_PREFS, { width: 1024, height: 700 }, member);
    expect(f.collapsed).toEqual([]);
    expect(f.editor).toBeGreaterThanOrEqual(EDITOR_MIN);
    expect(f.side).toBeLessThan(240);
    expect(total(f)).toBe(1024);
  });

  it("the pane shown last is the last to fold: showing the side bar again folds the preview instead", () => {
    const prefs = withPreview();
    const narrow = { width: 1024, height: 700 };
    const again = togglePane(prefs, fitLayout(prefs, narrow, member), "side");
    const f = fitLayout(again, narrow, member);
    expect(f.shown).toMatchObject({ side: true, preview: false, chat: true });
    expect(f.collapsed).toEqual(["preview"]);
    // Hiding a shown pane is a plain hide.
    const hidden = togglePane(again, f, "chat");
    expect(hidden.chatOpen).toBe(false);
  });

  it("a very narrow window keeps the editor alone; a short one folds the bottom panel", () => {
    const f = fitLayout(withPreview(), { width: 500, height: 300 }, member);
    expect(f.shown).toEqual({ side: false, chat: false, preview: false, panel: false });
    expect(f.collapsed.sort()).toEqual(["chat", "panel", "preview", "side"]);
    expect(f.editor).toBe(500);
  });

  it("a viewer never gets the preview, whatever is stored", () => {
    const f = fitLayout(withPreview(), { width: 1920, height: 1080 }, { preview: false });
    expect(f.shown.preview).toBe(false);
    expect(f.collapsed).toEqual([]);
  });

  it("a drag may not take the editor below its minimum", () => {
    const f = fitLayout(withPreview(), { width: 1600, height: 900 }, member);
    expect(dragMax(f, "chat", { height: 900 })).toBe(f.chat + f.editor - EDITOR_MIN);
    expect(dragMax(f, "panel", { height: 900 })).toBeLessThanOrEqual(900);
  });

  it("stored layouts are checked before use", () => {
    expect(isPrefs(DEFAULT_PREFS)).toBe(true);
    expect(isPrefs({ ...DEFAULT_PREFS, recent: ["side", "nope"] })).toBe(false);
    expect(isPrefs({ files: 240, chat: 400, term: 220, termOpen: true })).toBe(false);
  });
});
