"use client";
// A small, safe markdown renderer for streamed model text: it builds React elements only (no
// HTML string is ever injected), so model output cannot run script or style the page. Covers
// what chat answers use: fenced code (with copy), headings, lists, quotes, paragraphs, inline
// code, bold, italic, strikethrough, links (http, https and mailto only), GFM tables and
// rules. An unclosed fence while streaming renders as code so far.
import { memo, useState, type ReactNode } from "react";
import styles from "./chat.module.css";

type Block =
  | { t: "code"; lang: string; text: string }
  | { t: "h"; level: number; text: string }
  | { t: "ul" | "ol"; items: string[] }
  | { t: "quote"; text: string }
  | { t: "table"; align: Align[]; head: string[]; rows: string[][] }
  | { t: "hr" }
  | { t: "p"; text: string };

type Align = "left" | "center" | "right" | undefined;

const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** A table row's cells: split on pipes not escaped with a backslash, outer pipes optional. */
export function tableCells(line: string): string[] {
  const cells = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "").split(/(?<!\\)\|/);
  return cells.map((c) => c.trim().replace(/\\\|/g, "|"));
}

function alignOf(cell: string): Align {
  const left = cell.startsWith(":"), right = cell.endsWith(":");
  return left && right ? "center" : right ? "right" : left ? "left" : undefined;
}

export function parseBlocks(src: string): Block[] {
  const lines = src.replace(/\r\n/g, "\n").split("\n");
  const out: Block[] = [];
  let para: string[] = [];
  const endPara = () => {
    if (para.length) out.push({ t: "p", text: para.join("\n") });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(```+|~~~+)\s*([\w+#.-]*)/.exec(line);
    if (fence) {
      endPara();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      out.push({ t: "code", lang: fence[2], text: body.join("\n") });
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_DELIMITER.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      endPara();
      const head = tableCells(line);
      const align = tableCells(lines[i + 1]).map(alignOf);
      const rows: string[][] = [];
      for (i += 2; i < lines.length && lines[i].includes("|") && lines[i].trim(); i++) rows.push(tableCells(lines[i]));
      i--;
      out.push({ t: "table", align, head, rows });
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      endPara();
      out.push({ t: "hr" });
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      endPara();
      out.push({ t: "h", level: h[1].length, text: h[2] });
      continue;
    }
    const li = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (li) {
      endPara();
      const kind = /\d/.test(li[1]) ? "ol" : "ul";
      const last = out[out.length - 1];
      if (last && last.t === kind) last.items.push(li[2]);
      else out.push({ t: kind, items: [li[2]] });
      continue;
    }
    if (line.startsWith(">")) {
      endPara();
      const last = out[out.length - 1];
      const text = line.replace(/^>\s?/, "");
      if (last && last.t === "quote") last.text += `\n${text}`;
      else out.push({ t: "quote", text });
      continue;
    }
    if (!line.trim()) endPara();
    else para.push(line);
  }
  endPara();
  return out;
}

const SAFE_URL = /^(https?:|mailto:)/i;

export function renderInline(text: string, keyBase = "i"): ReactNode[] {
  const out: ReactNode[] = [];
  const re = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)|~~([^~]+)~~/g;
  let last = 0;
  let m: RegExpExecArray | null;
  let n = 0;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const key = `${keyBase}-${n++}`;
    if (m[2] !== undefined) out.push(<code key={key}>{m[2]}</code>);
    else if (m[3] ?? m[4]) out.push(<strong key={key}>{renderInline(m[3] ?? m[4], key)}</strong>);
    else if (m[5] ?? m[6]) out.push(<em key={key}>{renderInline(m[5] ?? m[6], key)}</em>);
    else if (m[9] !== undefined) out.push(<del key={key}>{renderInline(m[9], key)}</del>);
    else if (m[7] !== undefined) {
      out.push(
        SAFE_URL.test(m[8]) ? (
          <a key={key} href={m[8]} target="_blank" rel="noreferrer noopener">
            {m[7]}
          </a>
        ) : (
          `${m[7]} (${m[8]})`
        ),
      );
    }
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function CodeBlock({ code, lang }: { code: string; lang?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className={styles.code}>
      <div className={styles.codeBar}>
        <span>{lang || "text"}</span>
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(code).then(() => {
              setCopied(true);
              setTimeout(() => setCopied(false), 1500);
            });
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      <pre>
        <code>{code}</code>
      </pre>
    </div>
  );
}

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className={styles.md}>
      {parseBlocks(text).map((b, i) => {
        const k = `b${i}`;
        switch (b.t) {
          case "code":
            return <CodeBlock key={k} code={b.text} lang={b.lang} />;
          case "h": {
            const Tag = `h${Math.min(6, b.level + 2)}` as "h3";
            return <Tag key={k}>{renderInline(b.text, k)}</Tag>;
          }
          case "ul":
          case "ol": {
            const Tag = b.t;
            return <Tag key={k}>{b.items.map((it, j) => <li key={j}>{renderInline(it, `${k}-${j}`)}</li>)}</Tag>;
          }
          case "quote":
            return <blockquote key={k}>{renderInline(b.text, k)}</blockquote>;
          case "hr":
            return <hr key={k} />;
          case "table":
            return <Table key={k} block={b} k={k} />;
          default:
            return <p key={k}>{renderInline(b.text, k)}</p>;
        }
      })}
    </div>
  );
});

function Table({ block, k }: { block: Extract<Block, { t: "table" }>; k: string }) {
  const cell = (text: string, j: number, key: string, Tag: "th" | "td") => (
    <Tag key={j} style={block.align[j] ? { textAlign: block.align[j] } : undefined}>
      {renderInline(text, key)}
    </Tag>
  );
  return (
    <div className={styles.tableWrap}>
      <table>
        <thead>
          <tr>{block.head.map((c, j) => cell(c, j, `${k}-h${j}`, "th"))}</tr>
        </thead>
        <tbody>
          {block.rows.map((row, r) => (
            <tr key={r}>{block.head.map((_, j) => cell(row[j] ?? "", j, `${k}-${r}-${j}`, "td"))}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
