// How Monaco's TypeScript/JavaScript service reads a workspace file. It sees only the files
// open in the editor, never node_modules or the project's tsconfig, so every import of a
// package or an unopened file, and every Node or test-runner global, would be an error: a
// wall of red over correct code. Those diagnostics, which only say "I cannot see the rest of
// the project", are left out; what a file gets wrong on its own (a type mismatch, a typo in a
// local name, a syntax error) is still shown. Modern module code is assumed, as tsconfig
// files of today's projects set.
import type { typescript } from "monaco-editor";

export const IGNORED_DIAGNOSTICS = [
  2307, // Cannot find module 'x' or its corresponding type declarations.
  2792, // Cannot find module 'x'. Did you mean to set the 'moduleResolution' option…
  7016, // Could not find a declaration file for module 'x'.
  2580, // Cannot find name 'require' / 'process'. Do you need to install type definitions for node?
  2591, //   … and add 'node' to the types field in your tsconfig.
  2582, // Cannot find name 'describe'. Do you need to install type definitions for a test runner?
  2593, //   … and add it to the types field in your tsconfig.
  2503, // Cannot find namespace 'React' / 'NodeJS' (their types live in node_modules).
  2875, // This JSX tag requires the module path 'react/jsx-runtime' to exist.
];

export function compilerOptions(ts: typeof typescript): typescript.CompilerOptions {
  return {
    target: ts.ScriptTarget.ESNext,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.NodeJs,
    jsx: ts.JsxEmit.ReactJSX,
    allowJs: true,
    allowNonTsExtensions: true,
    esModuleInterop: true,
    resolveJsonModule: true,
  };
}

/** Applies the above to both the TypeScript and the JavaScript service. */
export function configureTypeScript(ts: typeof typescript): void {
  for (const defaults of [ts.typescriptDefaults, ts.javascriptDefaults]) {
    defaults.setCompilerOptions({ ...defaults.getCompilerOptions(), ...compilerOptions(ts) });
    defaults.setDiagnosticsOptions({
      ...defaults.getDiagnosticsOptions(),
      diagnosticCodesToIgnore: IGNORED_DIAGNOSTICS,
    });
  }
}
