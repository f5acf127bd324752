"use client";
// Dark or light, following the system setting live (the CSS does the same with a media query).
import { useSyncExternalStore } from "react";

const query = "(prefers-color-scheme: dark)";

export function useDarkMode(): boolean {
  return useSyncExternalStore(
    (cb) => {
      const mq = matchMedia(query);
      mq.addEventListener("change", cb);
      return () => mq.removeEventListener("change", cb);
    },
    () => matchMedia(query).matches,
    () => false,
  );
}
