// Monaco css language worker (bundled locally).
import "monaco-editor/languages/features/css/css.worker.js";
