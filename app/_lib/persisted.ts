"use client";
// Per-session UI memory in localStorage (pane sizes, open tabs): read once on mount, written on
// change. Bad or foreign stored values are dropped rather than trusted.
import { useEffect, useRef, useState } from "react";

export function readStored<T>(key: string, fallback: T, valid: (v: unknown) => v is T): T {
  try {
    const raw = localStorage.getItem(key);
    if (raw === null) return fallback;
    const parsed: unknown = JSON.parse(raw);
    return valid(parsed) ? parsed : fallback;
  } catch {
    return fallback;
  }
}

/** State mirrored to localStorage under `key`; starts from `fallback` until the page has mounted. */
export function usePersisted<T>(
  key: string,
  fallback: T,
  valid: (v: unknown) => v is T,
): [T, (v: T | ((prev: T) => T)) => void, boolean] {
  const [value, setValue] = useState<T>(fallback);
  const [loaded, setLoaded] = useState(false);
  const first = useRef(true);
  useEffect(() => {
    setValue(readStored(key, fallback, valid));
    setLoaded(true);
    // fallback/valid are constants of the caller; only the key matters.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(() => {
    if (!loaded) return;
    if (first.current) {
      first.current = false;
      return;
    }
    try {
      localStorage.setItem(key, JSON.stringify(value));
    } catch {
      // Storage full or disabled: the layout simply is not remembered.
    }
  }, [key, value, loaded]);
  return [value, setValue, loaded];
}
