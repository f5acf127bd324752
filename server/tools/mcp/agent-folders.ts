// MCP servers run on the server's machine, outside every sandbox, so none may be led by what the
// agent writes: a configuration file inside a folder the agent writes (a workspace, the data
// folder) could be given any command, and a stdio server started in such a folder, or naming a
// program or script there, runs the agent's code (`npx -y <pkg>` prefers a package installed in
// its cwd over the registry's). Such a server is not started, and says why.
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { McpConfig } from "./config";

/** The real path of `path`, or of its nearest existing parent with the rest appended. */
async function real(path: string): Promise<string> {
  const found = await realpath(path).catch(() => undefined);
  if (found) return found;
  const parent = dirname(path);
  return parent === path ? path : resolve(await real(parent), relative(parent, path));
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
    // The cwd, the program when named by a path, and any argument that is a path there.
    const paths = [cwd, ...[t.command, ...t.args].filter((a) => a.includes("/")).map((a) => resolve(cwd, a))];
    let folder: string | undefined;
    for (const p of paths) if ((folder = await inside(p))) break;
    if (folder)
      problems.push(
        `server "${server.name}": it would start in or run from ${folder}, which the agent writes, outside any sandbox; give it a cwd and program outside the workspaces`,
      );
    else servers.push(server);
  }
  return { servers, problems };
}
