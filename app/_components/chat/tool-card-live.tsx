"use client";
// What a running tool card shows while it runs: the time since it started (ticking once a
// second) and how much output has streamed in so far (tool.progress chunks, all of them, not
// just the kept tail). The timer belongs to the component and stops when it unmounts or the
// call ends.
import { useEffect, useState } from "react";
import styles from "./tool-card.module.css";

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function sizeText(chars: number): string {
  if (chars < 1024) return `${chars} B`;
  if (chars < 1024 * 1024) return `${(chars / 1024).toFixed(1)} KB`;
  return `${(chars / 1024 / 1024).toFixed(1)} MB`;
}

export function RunningMeta({ since, outputChars }: { since: string; outputChars?: number }) {
  const now = useNow(true);
  const started = Date.parse(since);
  return (
    <span className={styles.live} data-testid="tool-live">
      <span data-testid="tool-elapsed" title="Time since the call started running">
        {elapsedText(Number.isNaN(started) ? 0 : now - started)}
      </span>
      {outputChars !== undefined && outputChars > 0 && (
        <span data-testid="tool-output-size" title="Output received so far">
          {sizeText(outputChars)} output
        </span>
      )}
    </span>
  );
}
