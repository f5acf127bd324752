// Monaco json language worker (bundled locally).
import "monaco-editor/languages/features/json/json.worker.js";
