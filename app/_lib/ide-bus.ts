"use client";
// The IDE's command bus: the frame (keys, palette, buttons) says what should happen, the pane that
// can do it listens. It replaces counter props ("bump this number to focus"), which every pane in
// between had to carry. A command is delivered after the render that follows it, so a pane the
// same action opens or un-hides is on screen (and focusable) when it hears it; a command nobody
// listens to yet waits for its first listener (the Search panel mounts on first use).
import { createContext, useContext, useEffect, useRef, useState } from "react";

/** Every command a pane can be sent. */
export interface IdeCommandMap {
  "preview.focus": void;
  "terminal.focus": void;
  "terminal.new": void;
  "search.focus": void;
  "search.replace": void;
  "model.choose": void;
  "sessions.switch": void;
  "sessions.new": void;
  "editor.previous": void;
}
export type IdeCommand = keyof IdeCommandMap;
type Listener = () => void;

export interface IdeBus {
  send(command: IdeCommand): void;
  listen(command: IdeCommand, fn: Listener): () => void;
  /** Hands queued commands to their listeners; the frame calls it after each render. */
  deliver(): void;
}

/** `rerender` asks the owner to render again, so that `deliver` runs after the commit. */
export function createIdeBus(rerender: () => void): IdeBus {
  const listeners = new Map<IdeCommand, Set<Listener>>();
  const queued = new Set<IdeCommand>();
  const waiting = new Set<IdeCommand>();
  const call = (c: IdeCommand) => listeners.get(c)?.forEach((fn) => fn());
  return {
    send(c) {
      queued.add(c);
      rerender();
    },
    listen(c, fn) {
      let set = listeners.get(c);
      if (!set) listeners.set(c, (set = new Set()));
      set.add(fn);
      if (waiting.delete(c)) fn();
      return () => void set.delete(fn);
    },
    deliver() {
      for (const c of [...queued]) {
        queued.delete(c);
        if (listeners.get(c)?.size) call(c);
        else waiting.add(c);
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

/** Runs `fn` whenever `command` is sent (outside a frame: never). */
export function useIdeCommand(command: IdeCommand, fn: () => void): void {
  const bus = useContext(BusContext);
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => bus?.listen(command, () => ref.current()), [bus, command]);
}

/** The bus of the frame around, for panes that send commands of their own. */
export function useIdeBus(): IdeBus | null {
  return useContext(BusContext);
}
