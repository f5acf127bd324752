// Where the environment a line sets sends a program: a proxy variable (`ALL_PROXY=evil.com`,
// `https_proxy=…`, `RSYNC_PROXY=…`: curl, wget, git's libcurl, rsync and most libraries obey one),
// the command git or rsync runs to connect (`GIT_SSH_COMMAND`, `GIT_PROXY_COMMAND`, `RSYNC_RSH`,
// `RSYNC_CONNECT_PROG`, read as a script) and git config given by variables
// (`GIT_CONFIG_KEY_0`/`GIT_CONFIG_VALUE_0`, `GIT_CONFIG_PARAMETERS`). Read wherever the line
// sets them: a command's prefix, a statement of its own, `export`/`declare`, and the words of
// `env` or `sudo` (quoted or not), for whatever program gets them: a host the line hands every
// program as its proxy is one the line reaches.
import type { SimpleCommand } from "../shell/types";
import { configReach } from "./hosts-git";
import { asUrl, assignmentParts, type Nested, type Reach } from "./hosts-reach";

const PROXY = /^(all|https?|ftp|rsync|socks5?)_proxy$/i;
const COMMAND = /^(GIT_SSH_COMMAND|GIT_PROXY_COMMAND|RSYNC_RSH|RSYNC_CONNECT_PROG)$/;
const DECLARATIONS = new Set(["export", "declare", "typeset", "local", "readonly"]);
const PASSES_ENV = new Set(["env", "sudo", "doas"]);

/** `NAME=value` settings the command makes, values as bash passes them. */
function settings(cmd: SimpleCommand): { name: string; value: string }[] {
  const program = cmd.argv[0];
  const raw = [...cmd.assignments];
  const decoded: string[] = [];
  if (program !== undefined && DECLARATIONS.has(program)) raw.push(...cmd.words.slice(1).map((w) => w.text));
  if (program !== undefined && PASSES_ENV.has(program))
    decoded.push(...cmd.words.slice(1).flatMap((w) => (w.dynamic ? [] : [w.text])));
  return [...raw.map((t) => assignmentParts(t, true)), ...decoded.map((t) => assignmentParts(t, false))].flatMap((s) =>
    s ? s.values.map((value) => ({ name: s.name, value })) : [],
  );
}

// `'http.proxy'='evil.com' 'core.x'='y'`: git's quoting of `-c` settings for its children.
const PARAMETERS = /'((?:[^']|'\\'')*)'(?:='((?:[^']|'\\'')*)')?/g;
const unquote = (t: string) => t.replace(/'\\''/g, "'");

export function envReach(cmd: SimpleCommand, nested: Nested): Reach {
  const out: Reach = { urls: [] };
  const add = (r: Reach) => {
    out.urls.push(...r.urls);
    out.unsure ??= r.unsure;
  };
  const set = settings(cmd);
  for (const { name, value } of set) {
    if (PROXY.test(name) && value.trim() !== "") out.urls.push(asUrl(value.trim()));
    else if (COMMAND.test(name)) {
      const r = nested(value);
      add({ urls: r.urls, unsure: r.unsure && `the command \`${name}\` holds: ${r.unsure}` });
    } else if (name === "GIT_CONFIG_PARAMETERS")
      for (const m of value.matchAll(PARAMETERS)) add(configReach(unquote(m[1]), unquote(m[2] ?? ""), nested));
    else {
      const key = /^GIT_CONFIG_KEY_(\d+)$/.exec(name);
      const v = key && set.find((s) => s.name === `GIT_CONFIG_VALUE_${key[1]}`);
      if (v) add(configReach(value, v.value, nested));
    }
  }
  return out;
}
