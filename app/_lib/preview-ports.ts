"use client";
// The ports the preview pane lists: GET /api/preview/ports (server/preview/http.ts), which asks
// the session's runner. Polled every 2 s while the pane is shown and the tab is visible, the
// cheapest way to notice a server that just started listening (the runner reads /proc each time).
import { useEffect, useState } from "react";
import { PreviewPorts, type PreviewPortEntry } from "../../server/protocol/preview";

export interface PortsState {
  ports: PreviewPortEntry[];
  /** Why the list could not be read (runner away, session gone); undefined when it could. */
  error?: string;
  loaded: boolean;
}

export async function fetchPorts(sessionId: string, signal?: AbortSignal): Promise<PreviewPortEntry[]> {
  const res = await fetch(`/api/preview/ports?session=${encodeURIComponent(sessionId)}`, { signal, cache: "no-store" });
  const body: unknown = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body as { error?: string }).error ?? `HTTP ${res.status}`);
  return PreviewPorts.parse(body).ports;
}

export function usePreviewPorts(sessionId: string, active: boolean, intervalMs = 2_000): PortsState {
  const [state, setState] = useState<PortsState>({ ports: [], loaded: false });
  useEffect(() => {
    if (!active) return;
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (document.visibilityState === "visible") {
        try {
          const ports = await fetchPorts(sessionId, ctrl.signal);
          setState({ ports, loaded: true });
        } catch (err) {
          if (ctrl.signal.aborted) return;
          setState((s) => ({ ...s, error: (err as Error).message, loaded: true }));
        }
      }
      if (!ctrl.signal.aborted) timer = setTimeout(() => void tick(), intervalMs);
    };
    void tick();
    const onVisible = () => {
      if (document.visibilityState !== "visible") return;
      clearTimeout(timer);
      void tick();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      ctrl.abort();
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [sessionId, active, intervalMs]);
  return state;
}
