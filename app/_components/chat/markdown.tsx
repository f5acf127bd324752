"use client";
// The chat's markdown: react-markdown (CommonMark) + remark-gfm (tables, strikethrough, task
// lists, autolinks) + highlighting of a handful of languages (./highlight.ts: offline, no
// auto-detection). It builds React elements only: raw HTML in model text is shown as text (no
// rehype-raw), a remote image is never loaded (a model-chosen image URL would be a request off
// the machine carrying whatever the model put in it: it becomes a link naming its host; only a
// data: raster is shown, and the page's CSP, server/http/page-csp.ts, refuses the rest), and a
// link is clickable only for http, https and mailto, opening in a new tab without an opener. An
// unclosed fence while streaming renders as code so far (CommonMark closes it at the end of the
// text).
import { memo, useState, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import type { Element, ElementContent } from "hast";
import { rehypeCodeHighlight } from "./highlight";
import styles from "./chat.module.css";

const SAFE_URL = /^(https?:|mailto:)/i;

/** The URL a link may point at, or undefined when it may not be clickable. */
export function safeHref(url: string | undefined): string | undefined {
  return url && SAFE_URL.test(url.trim()) ? url : undefined;
}

const INLINE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]*$/i;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}

function textOf(nodes: ElementContent[]): string {
  return nodes.map((n) => (n.type === "text" ? n.value : n.type === "element" ? textOf(n.children) : "")).join("");
}

export function CodeBlock({ code, lang, children }: { code: string; lang?: string; children?: ReactNode }) {
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
      <pre>{children ?? <code>{code}</code>}</pre>
    </div>
  );
}

const heading = (Tag: "h3" | "h4" | "h5" | "h6"): Components["h1"] =>
  function Heading({ children }) {
    return <Tag>{children}</Tag>;
  };

const components: Components = {
  // Headings sit inside a chat message: two levels down, h6 at most.
  h1: heading("h3"),
  h2: heading("h4"),
  h3: heading("h5"),
  h4: heading("h6"),
  h5: heading("h6"),
  h6: heading("h6"),
  pre({ node, children }) {
    const code = node?.children.find((c): c is Element => c.type === "element" && c.tagName === "code");
    const classes = code?.properties.className;
    const lang = (Array.isArray(classes) ? classes : [])
      .map(String)
      .find((c) => c.startsWith("language-"))
      ?.slice("language-".length);
    const text = code ? textOf(code.children).replace(/\n$/, "") : "";
    return (
      <CodeBlock code={text} lang={lang}>
        {children}
      </CodeBlock>
    );
  },
  a({ href, children }) {
    const safe = safeHref(href);
    if (!safe)
      return (
        <>
          {children}
          {href ? ` (${href})` : null}
        </>
      );
    return (
      <a href={safe} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    );
  },
  img({ alt, src }) {
    const url = typeof src === "string" ? src.trim() : undefined;
    // Bytes already in the text cost no request: shown, as a raster only (an SVG is a document).
    if (url && INLINE_IMAGE.test(url)) return <img src={url} alt={alt || "image"} className={styles.mdImage} />;
    const safe = safeHref(url);
    const label = `image: ${alt || "untitled"}`;
    // Not loaded: a click opens it in a tab, and the label says which host that asks.
    return safe ? (
      <a href={safe} target="_blank" rel="noopener noreferrer">
        [{label}
        {hostOf(safe) ? ` · ${hostOf(safe)}` : ""}]
      </a>
    ) : (
      <>[{label}]</>
    );
  },
  table({ children }) {
    return (
      <div className={styles.tableWrap}>
        <table>{children}</table>
      </div>
    );
  },
};

// Links and images are vetted by their components above; the transform keeps the written URL
// so an unsafe one can be shown as text instead of vanishing.
const keepUrl = (url: string) => url;

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className={styles.md}>
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[rehypeCodeHighlight]}
        components={components}
        urlTransform={keepUrl}
        skipHtml={false}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
});
