// Highlighting of the chat's fenced code: a rehype plugin over lowlight (highlight.js) with the
// handful of languages registered here and no auto-detection. Ours rather than rehype-highlight,
// which bundles lowlight's 37 common grammars whatever it is told to register.
import { createLowlight } from "lowlight";
import { toText } from "hast-util-to-text";
import { visit } from "unist-util-visit";
import type { ElementContent, Element, Root } from "hast";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";

const lowlight = createLowlight({ bash, css, diff, javascript, json, markdown, python, typescript, xml });
// The definitions carry their usual aliases (ts, js, sh, py, html, md); these are the rest.
lowlight.registerAlias({
  bash: ["shell", "console"],
  json: ["jsonc"],
  typescript: ["tsx"],
  javascript: ["jsx", "mjs", "cjs"],
});

/** The fence's language (`language-x` / `lang-x`), unless the block opts out with `no-highlight`. */
function languageOf(code: Element): string | undefined {
  const classes = Array.isArray(code.properties.className) ? code.properties.className.map(String) : [];
  if (classes.some((c) => c === "no-highlight" || c === "nohighlight")) return undefined;
  const named = classes.find((c) => c.startsWith("language-") || c.startsWith("lang-"));
  return named?.slice(named.indexOf("-") + 1);
}

/** rehype plugin: `<pre><code class="language-x">` gets highlight.js spans when x is registered. */
export function rehypeCodeHighlight() {
  return (tree: Root) => {
    visit(tree, "element", (node, _index, parent) => {
      if (node.tagName !== "code" || parent?.type !== "element" || parent.tagName !== "pre") return;
      const lang = languageOf(node);
      if (!lang) return;
      const classes = Array.isArray(node.properties.className) ? node.properties.className : [];
      if (!classes.includes("hljs")) node.properties.className = ["hljs", ...classes];
      if (!lowlight.registered(lang)) return;
      const result = lowlight.highlight(lang, toText(node, { whitespace: "pre" }));
      if (result.children.length > 0) node.children = result.children as ElementContent[];
    });
  };
}
