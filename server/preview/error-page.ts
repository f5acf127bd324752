// The page the preview shows instead of the app when the app cannot answer: nothing listens on
// the port yet, the runner is away, the app timed out. Plain HTML on the preview's own origin,
// so it reads well inside the pane's frame and in a tab of its own alike.
import type { ServerResponse } from "node:http";
import type { PreviewErrorCode } from "../protocol/preview";

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function errorPage(
  res: ServerResponse,
  status: number,
  port: number,
  error: { code: PreviewErrorCode; message: string },
): void {
  if (res.headersSent) return void res.destroy();
  const title =
    error.code === "refused" && status === 502
      ? `Nothing listens on port ${port} yet`
      : error.code === "timeout"
        ? `Port ${port} did not answer in time`
        : status === 401
          ? "Open this preview from the IDE"
          : status === 403
            ? "Not your preview"
            : `The preview of port ${port} is unavailable`;
  const hint =
    error.code === "refused" && status === 502
      ? `<p>Start the app's server in the IDE's terminal so that it listens on port ${port} (for example <code>python3 -m http.server ${port}</code>), then reload.</p>`
      : "";
  const body = `<!doctype html><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font:15px system-ui,sans-serif;margin:48px;color:#333}code{background:#eee;padding:1px 4px}</style>
<h1 data-preview-error="${escape(error.code)}">${escape(title)}</h1><p>${escape(error.message)}</p>${hint}`;
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-quiver-preview-error": error.code,
  });
  res.end(body);
}
