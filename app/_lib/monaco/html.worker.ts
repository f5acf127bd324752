// Monaco html language worker (bundled locally).
import "monaco-editor/languages/features/html/html.worker.js";
