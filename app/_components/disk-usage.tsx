// A workspace's disk usage against its limit, as "1.2 GB of 5 GB" with a thin bar: shown in the
// IDE (status bar / file tree header). Amber from 90%, red at the limit, where writes fail.
import styles from "./disk-usage.module.css";

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${+(n / 1024 ** 3).toFixed(1)} GB`;
  if (n >= 1024 ** 2) return `${+(n / 1024 ** 2).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}

export function DiskUsage({ usedBytes, limitBytes }: { usedBytes: number; limitBytes: number }) {
  const ratio = limitBytes > 0 ? Math.min(1, usedBytes / limitBytes) : 0;
  const level = ratio >= 1 ? "full" : ratio >= 0.9 ? "high" : "ok";
  const text = `${formatBytes(usedBytes)} of ${formatBytes(limitBytes)}`;
  const title =
    level === "full"
      ? `${text}: the workspace's disk limit is reached; writes fail until files are deleted`
      : `${text} used (the workspace's disk limit)`;
  return (
    <span className={styles.usage} data-level={level} title={title} data-testid="disk-usage">
      <span className={styles.bar} aria-hidden>
        <span className={styles.fill} style={{ width: `${Math.round(ratio * 100)}%` }} />
      </span>
      {text}
    </span>
  );
}
