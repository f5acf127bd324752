// Monaco editor worker (bundled locally; nothing is fetched from a CDN).
import "monaco-editor/editor/editor.worker.js";
