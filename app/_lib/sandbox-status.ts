"use client";
// What the session's runner said about its sandbox (runner hello → /api/health): whether
// commands run sandboxed, why not, and what network they get. The IDE frame provides it; the
// sandbox banner and the approval cards for commands say it plainly.
import { createContext, useContext } from "react";

export interface SandboxStatus {
  /** False: commands and terminals run with the runner's full rights. */
  sandboxed: boolean;
  /** Why unsandboxed ("bubblewrap (bwrap) is not installed", "disabled by configuration"). */
  reason?: string;
  /** What a command granted network reaches: isolated, none or host. */
  network?: string;
  networkReason?: string;
}

/** Undefined while no runner is connected (nothing to say yet). */
export const SandboxStatusContext = createContext<SandboxStatus | undefined>(undefined);

export const useSandboxStatus = (): SandboxStatus | undefined => useContext(SandboxStatusContext);

/** QUIVER_SANDBOX=off: running unsandboxed was chosen, so no banner asks to fix it. */
export const chosenUnsandboxed = (s: SandboxStatus): boolean => s.reason === "disabled by configuration";
