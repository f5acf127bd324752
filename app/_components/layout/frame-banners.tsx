"use client";
// The banner row under the IDE's top bar: access that ended (a share link revoked or expired, a
// member no longer let in), a lost connection or runner, else the sandbox warning. At most one
// shows; the first that applies wins.
import { SandboxBanner } from "../sandbox-banner";
import styles from "../ide-frame.module.css";

interface Props {
  ended: boolean;
  member: boolean;
  /** The stream's error, the server's words (for a revoked link: that it was revoked). */
  error?: string;
  socketClosed: boolean;
  socketDown: boolean;
  runnerDown: boolean;
  /** The runner this session's workspace is placed on, when it is gone. */
  goneRunner?: { id: string; since?: string | number | Date | null };
}

export function FrameBanners({ ended, member, error, socketClosed, socketDown, runnerDown, goneRunner }: Props) {
  if (ended && !member) {
    return (
      <div className={styles.banner} role="alert" data-testid="link-ended">
        {error ?? "This share link has ended."} <a href="/share/leave">Forget this link</a>
      </div>
    );
  }
  if (ended) {
    return (
      <div className={styles.banner} role="alert" data-testid="access-ended">
        This session is not open to you: it was deleted, it is another member&apos;s, or you are no longer in its org.{" "}
        <a href="/">Back to your sessions</a>
      </div>
    );
  }
  if (socketDown || runnerDown) {
    return (
      <div className={styles.banner} role="status" data-testid="connection-banner">
        {socketClosed ? (
          "Connection to the server lost. Reconnecting… (events resume where they stopped)"
        ) : socketDown ? (
          `Live updates interrupted (${error ?? "unknown error"}). Retrying…`
        ) : goneRunner ? (
          <span data-testid="workspace-runner-gone">
            This session&apos;s workspace is on runner {goneRunner.id}, gone since{" "}
            {goneRunner.since ? new Date(goneRunner.since).toLocaleString() : "an unknown time"}: files, terminal and
            tools are unavailable until it reconnects. The history stays readable.
          </span>
        ) : (
          "The runner is disconnected: files, terminal and tools are unavailable until it reconnects."
        )}
      </div>
    );
  }
  return <SandboxBanner />;
}
