// Types of compile.mjs (plain JavaScript: it runs before anything is compiled).
/** The folder of a fresh build under `buildRoot` (its `server-main.mjs` is the server), compiled first when stale. */
export function compiledServer(buildRoot: string, log: (line: string) => void): Promise<string>;
