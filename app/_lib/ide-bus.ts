"use client";
// The IDE's command bus: the frame (keys, palette, buttons) says what should happen, the pane that
// can do it listens. It replaces counter props ("bump this number to focus"), which every pane in
// between had to carry. A command is delivered after the render that follows it, so a pane the
// same action opens or un-hides is on screen (and focusable) when it hears it; a command nobody
// listens to yet waits for its first listener (the Search panel mounts on first use). A command
// may carry a value (which side bar tab, where the preview goes); sent twice before delivery, the
// last wins.
import { createContext, useContext, useEffect, useRef, useState } from "react";
import type { SideView } from "../_components/side-bar";
import type { TreeCommand } from "../_components/files/file-tree";
import type { PreviewRequest } from "../_components/preview/preview-pane";

/** Every command a pane can be sent, and the value it carries. */
export interface IdeCommandMap {
  "preview.focus": void;
  "preview.open": PreviewRequest;
  "terminal.focus": void;
  "terminal.new": void;
  "search.focus": void;
  "search.replace": void;
  "side.show": SideView;
  "tree.command": TreeCommand;
  "model.choose": void;
  "sessions.switch": void;
  "sessions.new": void;
  "editor.previous": void;
}
export type IdeCommand = keyof IdeCommandMap;
type Listener<C extends IdeCommand> = (value: IdeCommandMap[C]) => void;
/** A command without a value is sent with none. */
type Value<C extends IdeCommand> = IdeCommandMap[C] extends void ? [] : [value: IdeCommandMap[C]];

export interface IdeBus {
  send<C extends IdeCommand>(command: C, ...value: Value<C>): void;
  listen<C extends IdeCommand>(command: C, fn: Listener<C>): () => void;
  /** Hands queued commands to their listeners; the frame calls it after each render. */
  deliver(): void;
}

/** `rerender` asks the owner to render again, so that `deliver` runs after the commit. */
export function createIdeBus(rerender: () => void): IdeBus {
  const listeners = new Map<IdeCommand, Set<Listener<any>>>();
  const queued = new Map<IdeCommand, unknown>();
  const waiting = new Map<IdeCommand, unknown>();
  return {
    send(c, ...value) {
      // Re-inserted, so commands are delivered in the order last sent.
      queued.delete(c);
      queued.set(c, value[0]);
      rerender();
    },
    listen(c, fn) {
      let set = listeners.get(c);
      if (!set) listeners.set(c, (set = new Set()));
      set.add(fn);
      if (waiting.has(c)) {
        const value = waiting.get(c);
        waiting.delete(c);
        fn(value as never);
      }
      return () => void set.delete(fn);
    },
    deliver() {
      for (const [c, value] of [...queued]) {
        queued.delete(c);
        const set = listeners.get(c);
        if (set?.size) set.forEach((fn) => fn(value));
        else waiting.set(c, value);
      }
    },
  };
}

const BusContext = createContext<IdeBus | null>(null);
export const IdeBusProvider = BusContext.Provider;

/** The frame's bus: one per frame, delivering after every render. */
export function useOwnIdeBus(): IdeBus {
  const [, setTick] = useState(0);
  const bus = useRef<IdeBus | null>(null);
  bus.current ??= createIdeBus(() => setTick((n) => n + 1));
  const b = bus.current;
  useEffect(() => b.deliver());
  return b;
}

/** Runs `fn` with the command's value whenever `command` is sent (outside a frame: never). */
export function useIdeCommand<C extends IdeCommand>(command: C, fn: Listener<C>): void {
  const bus = useContext(BusContext);
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => bus?.listen(command, (value) => ref.current(value)), [bus, command]);
}

/** The bus of the frame around, for panes that send commands of their own. */
export function useIdeBus(): IdeBus | null {
  return useContext(BusContext);
}
