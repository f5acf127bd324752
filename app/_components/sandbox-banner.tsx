"use client";
// The banner that says plainly when the agent's commands and the terminal run unsandboxed: the
// cause the runner gave (bubblewrap missing or broken), what it means (the person's full
// rights) and how to fix it or, on purpose, hide it (QUIVER_SANDBOX=off). Also what network
// commands get, when the runner says. Not shown when unsandboxed was chosen.
import { chosenUnsandboxed, useSandboxStatus } from "../_lib/sandbox-status";
import styles from "./ide-frame.module.css";

const NETWORK: Record<string, string> = {
  isolated: "commands granted network reach the internet, not this machine's loopback",
  none: "commands have no network",
  host: "commands granted network share this machine's network, loopback included",
};

export function SandboxBanner() {
  const status = useSandboxStatus();
  if (!status || status.sandboxed || chosenUnsandboxed(status)) return null;
  const cause = status.reason ? status.reason.replace(/^./, (c) => c.toUpperCase()) : "No sandbox is available";
  const network = status.network ? NETWORK[status.network] : undefined;
  return (
    <div className={styles.banner} role="alert" data-testid="sandbox-banner">
      <strong>Unsandboxed:</strong> {cause} — the agent&apos;s commands and the terminal run with your full rights.
      Install bubblewrap (<code>apt-get install bubblewrap</code>) and restart Quiver, or set{" "}
      <code>QUIVER_SANDBOX=off</code> to hide this.
      {network && ` Network: ${network}${status.networkReason ? ` (${status.networkReason})` : ""}.`}
    </div>
  );
}
