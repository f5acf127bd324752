// Monaco TypeScript/JavaScript language worker (bundled locally).
import "monaco-editor/languages/features/typescript/ts.worker.js";
