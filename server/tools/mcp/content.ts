// An MCP tool result as the text the model reads: text blocks as they are, images and audio as a
// short note (the slot's results are text), embedded resources as their text or a note, links
// as a note, and structuredContent as JSON unless a text block already carries the same JSON
// (servers are told to send both). Blocks are separated by a blank line.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Block = CallToolResult["content"][number];

/** Size of base64 data in bytes, without decoding it. */
function base64Bytes(data: string): number {
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad);
}

function blockText(b: Block): string {
  switch (b.type) {
    case "text":
      return b.text;
    case "image":
      return `[image: ${b.mimeType}, ${base64Bytes(b.data)} bytes, not shown]`;
    case "audio":
      return `[audio: ${b.mimeType}, ${base64Bytes(b.data)} bytes, not played]`;
    case "resource": {
      const r = b.resource;
      if ("text" in r && typeof r.text === "string") return r.text;
      const blob = "blob" in r && typeof r.blob === "string" ? `, ${base64Bytes(r.blob)} bytes` : "";
      return `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}${blob}, binary, not shown]`;
    }
    case "resource_link":
      return `[resource link: ${b.uri}${b.name && b.name !== b.uri ? ` (${b.name})` : ""}${b.mimeType ? `, ${b.mimeType}` : ""}]`;
    default:
      return `[${(b as { type?: string }).type ?? "unknown"} content, not shown]`;
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** The model-facing text of a result (empty results say so, so the model is not left guessing). */
export function resultText(result: CallToolResult): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const parts = content.map(blockText);
  const structured = result.structuredContent;
  if (structured !== undefined && !content.some((b) => b.type === "text" && sameJson(b.text, structured))) {
    parts.push(JSON.stringify(structured, null, 2));
  }
  const text = parts.join("\n\n");
  if (text.trim() !== "") return text;
  return result.isError ? "The tool failed and gave no details." : "(the tool returned no content)";
}
