import { describe, expect, it } from "vitest";
import { chordOf } from "./ide-keys";

const key = (
  code: string,
  key: string,
  mods: { ctrl?: boolean; meta?: boolean; shift?: boolean; alt?: boolean } = {},
) => ({
  code,
  key,
  ctrlKey: !!mods.ctrl,
  metaKey: !!mods.meta,
  shiftKey: !!mods.shift,
  altKey: !!mods.alt,
});

describe("IDE chords", () => {
  it("names VS Code's pane keys, with Ctrl or Cmd", () => {
    expect(chordOf(key("KeyF", "F", { ctrl: true, shift: true }))).toBe("search");
    expect(chordOf(key("KeyE", "E", { meta: true, shift: true }))).toBe("explorer");
    expect(chordOf(key("KeyG", "G", { ctrl: true, shift: true }))).toBe("changes");
    expect(chordOf(key("KeyH", "H", { ctrl: true, shift: true }))).toBe("replace");
    expect(chordOf(key("KeyP", "π", { ctrl: true, alt: true }))).toBe("togglePreview");
    expect(chordOf(key("KeyP", "p", { ctrl: true }))).toBe("quickOpen");
    expect(chordOf(key("KeyP", "P", { ctrl: true, shift: true }))).toBe("commandPalette");
    expect(chordOf(key("Backquote", "`", { ctrl: true }))).toBe("toggleTerminal");
    expect(chordOf(key("Backquote", "~", { ctrl: true, shift: true }))).toBe("newTerminal");
    expect(chordOf(key("KeyA", "a", { ctrl: true, alt: true }))).toBe("approval");
    expect(chordOf(key("KeyA", "A", { ctrl: true, alt: true, shift: true }))).toBeUndefined();
  });

  it("shows and hides the side bar (Ctrl+B), the bottom panel (Ctrl+J) and the chat (Ctrl+Alt+B)", () => {
    expect(chordOf(key("KeyB", "b", { ctrl: true }))).toBe("toggleSideBar");
    expect(chordOf(key("KeyB", "b", { meta: true }))).toBe("toggleSideBar");
    expect(chordOf(key("KeyJ", "j", { ctrl: true }))).toBe("togglePanel");
    expect(chordOf(key("KeyB", "∫", { ctrl: true, alt: true }))).toBe("toggleChat");
    expect(chordOf(key("KeyB", "B", { ctrl: true, shift: true }))).toBeUndefined();
    expect(chordOf(key("KeyJ", "J", { ctrl: true, shift: true }))).toBeUndefined();
    expect(chordOf(key("KeyB", "b"))).toBeUndefined();
  });

  it("leaves everything else to the focused widget (the shell keeps Ctrl+C, Ctrl+S, plain keys)", () => {
    expect(chordOf(key("KeyP", "p"))).toBeUndefined();
    expect(chordOf(key("KeyC", "c", { ctrl: true }))).toBeUndefined();
    expect(chordOf(key("KeyS", "s", { ctrl: true }))).toBeUndefined();
    expect(chordOf(key("KeyF", "f", { ctrl: true }))).toBeUndefined();
    // Enter never answers a card from a chord: only on the card itself, after Ctrl+Alt+A.
    expect(chordOf(key("Enter", "Enter", { ctrl: true }))).toBeUndefined();
    expect(chordOf(key("KeyA", "a", { ctrl: true }))).toBeUndefined();
  });
});
