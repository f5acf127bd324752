// The usage indicator says "1.2 GB of 5 GB" and turns amber from 90% and red at the limit.
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { DiskUsage } from "./disk-usage";

const GB = 1024 ** 3;

describe("DiskUsage", () => {
  it("shows usage against the limit and its level", () => {
    expect(renderToStaticMarkup(<DiskUsage usedBytes={1.2 * GB} limitBytes={5 * GB} />)).toMatch(
      /data-level="ok".*1\.2 GB of 5 GB/,
    );
    expect(renderToStaticMarkup(<DiskUsage usedBytes={4.6 * GB} limitBytes={5 * GB} />)).toMatch(/data-level="high"/);
    const full = renderToStaticMarkup(<DiskUsage usedBytes={5 * GB} limitBytes={5 * GB} />);
    expect(full).toMatch(/data-level="full"/);
    expect(full).toMatch(/disk limit is reached; writes fail until files are deleted/);
    expect(renderToStaticMarkup(<DiskUsage usedBytes={300 * 1024} limitBytes={32 * 1024 ** 2} />)).toMatch(
      /300 KB of 32 MB/,
    );
  });
});
