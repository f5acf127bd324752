// The `fetch_url` op: a guarded GET turned into text the model can read (HTML made readable,
// other text decoded by its charset, binary refused), marked as network content.
import { FetchUrlInput, type FetchResultMeta } from "../../server/protocol/exec-ops";
import { defineOp, type OpResult } from "../ops";
import { guardedFetch, type FetchedResponse, type FetchOptions } from "./fetch";
import { FetchRefused } from "./guard";
import { extractTitle, htmlToText } from "./html";

const TEXTUAL =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-javascript|x-www-form-urlencoded|yaml|x-yaml|toml|x-sh|graphql|ld\+json|rss\+xml|atom\+xml)|[^;]*\+(json|xml)\b)/i;

function charsetOf(contentType: string, body: Buffer, html: boolean): string {
  const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (fromHeader) return fromHeader;
  if (html) {
    const head = body.subarray(0, 2048).toString("latin1");
    const meta = /<meta[^>]{0,200}?charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
    if (meta) return meta;
  }
  return "utf-8";
}

function decode(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

const looksBinary = (body: Buffer) => body.subarray(0, 1024).includes(0);

export function renderResponse(res: FetchedResponse, raw: boolean): OpResult {
  const type = res.contentType.split(";")[0].trim().toLowerCase();
  const html = type === "text/html" || type === "application/xhtml+xml";
  const meta: FetchResultMeta = {
    network: true,
    url: res.url,
    finalUrl: res.finalUrl,
    status: res.status,
    contentType: res.contentType,
    bytes: res.body.length,
    truncated: res.truncated,
    redirects: res.redirects,
  };
  const lines = [`URL: ${res.finalUrl}`, `Status: ${res.status} ${res.statusText}`.trimEnd()];
  if (res.contentType) lines.push(`Content-Type: ${res.contentType}`);
  if (res.redirects.length) lines.push(`Redirected: ${[res.url, ...res.redirects].join(" → ")}`);
  if (res.truncated) lines.push(`Truncated: only the first ${res.body.length} bytes were read`);
  if (res.notFollowed) {
    meta.notFollowed = res.notFollowed;
    lines.push(
      "",
      `Redirected to another host, not followed: ${res.notFollowed}`,
      "To read it, call fetch_url again with that URL (each host is checked against the org's policy).",
    );
    return { ok: true, output: lines.join("\n"), meta };
  }
  const ok = res.status < 400;
  const textual = type ? TEXTUAL.test(type) || html : !looksBinary(res.body);
  if (!textual || (type === "" && looksBinary(res.body))) {
    lines.push("", `Binary content (${type || "unknown type"}, ${res.body.length} bytes) is not shown.`);
    return { ok, output: lines.join("\n"), meta };
  }
  const text = decode(res.body, charsetOf(res.contentType, res.body, html));
  if (html && !raw) {
    const title = extractTitle(text);
    if (title) lines.push(`Title: ${title}`);
    lines.push("", htmlToText(text, res.finalUrl));
  } else {
    lines.push("", text);
  }
  return { ok, output: lines.join("\n"), meta };
}

export function createFetchOp(options: FetchOptions) {
  return defineOp({
    input: FetchUrlInput,
    async run(input, ctx): Promise<OpResult> {
      try {
        const res = await guardedFetch(input.url, { headers: input.headers, signal: ctx.signal }, options);
        return renderResponse(res, input.raw === true);
      } catch (e) {
        const err = e as Error;
        if (err instanceof FetchRefused)
          return { ok: false, output: `Refused: ${err.message}`, meta: { network: true, refused: true } };
        const code = (err as { code?: string }).code;
        return {
          ok: false,
          output: `Fetch failed: ${err.message}${code && !err.message.includes(code) ? ` (${code})` : ""}`,
          meta: { network: true },
        };
      }
    },
  });
}
