// MCP servers run on the server's machine, outside every sandbox, so none may be led by what the
// agent writes: a configuration file inside a folder the agent writes (a workspace, the data
// folder) could be given any command, and a stdio server started in such a folder, or naming a
// program or script there (named by an argument or an environment value such as NODE_OPTIONS or
// PATH), runs the agent's code (`npx -y <pkg>` prefers a package installed in its cwd over the
// registry's). Such a server is not started, and says why.
import { constants } from "node:fs";
import { access, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { McpConfig } from "./config";

/** The real path of `path`, or of its nearest existing parent with the rest appended. */
async function real(path: string): Promise<string> {
  const found = await realpath(path).catch(() => undefined);
  if (found) return found;
  const parent = dirname(path);
  return parent === path ? path : resolve(await real(parent), relative(parent, path));
}

/** Where `command` (no slash) is found on `path`, each folder resolved against `cwd`. */
async function onPath(command: string, path: string, cwd: string): Promise<string[]> {
  if (command.includes("/")) return [];
  for (const dir of path.split(":").filter(Boolean)) {
    const file = resolve(cwd, dir, command);
    if (
      await access(file, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return [file];
  }
  return [];
}

const within = (folder: string, path: string) => {
  const r = relative(folder, path);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
};

/** `config` without the servers the agent could steer, each with a problem saying why. */
export async function withoutAgentFolders(
  config: McpConfig,
  configPath: string,
  agentFolders: readonly string[],
): Promise<McpConfig> {
  const folders = await Promise.all(agentFolders.map(real));
  const inside = async (path: string) => {
    const at = await real(path);
    return folders.find((f) => within(f, at));
  };
  const file = await inside(resolve(configPath));
  if (file)
    return {
      servers: [],
      problems: [
        ...config.problems,
        `the MCP configuration ${configPath} is inside ${file}, which the agent writes: no MCP server is started from it`,
      ],
    };
  const servers: McpConfig["servers"] = [];
  const problems = [...config.problems];
  for (const server of config.servers) {
    const t = server.transport;
    if (t.kind !== "stdio") {
      servers.push(server);
      continue;
    }
    const cwd = t.cwd ?? process.cwd();
    // The cwd, the program as PATH finds it, and every path in an argument or an environment
    // value, whole or after `=`, `:` or a space (`--require=/ws/x.js`, NODE_OPTIONS, PATH).
    const strings = [t.command, ...t.args, ...Object.values(t.env)];
    const pieces = strings.flatMap((x) => x.split(/[=:\s,]+/)).filter((x) => /^(\/|\.\.?\/|~\/)/.test(x));
    const paths = [
      cwd,
      ...pieces.map((x) => (x.startsWith("~/") ? join(homedir(), x.slice(2)) : resolve(cwd, x))),
      ...(await onPath(t.command, t.env.PATH ?? process.env.PATH ?? "", cwd)),
    ];
    let folder: string | undefined;
    for (const p of paths) if ((folder = await inside(p))) break;
    // Bluntly too: any value naming a folder the agent writes, however it is spelled around it.
    folder ??= [...agentFolders, ...folders].find((f) => strings.some((x) => x.includes(f)));
    if (folder)
      problems.push(
        `server "${server.name}": it would start in or run from ${folder}, which the agent writes, outside any sandbox; give it a cwd and program outside the workspaces`,
      );
    else servers.push(server);
  }
  return { servers, problems };
}
