// Commands a network client runs locally from a string the line gives it, listed as commands in
// their own right so a rule on them decides (a deny of `rm` holds inside `ssh -o
// ProxyCommand='rm …'`): ssh's `ProxyCommand`, `LocalCommand` and `KnownHostsCommand` (scp and
// sftp take `-o` too, and run `-S`/`-D` programs), rsync's `-e`/`--rsh`, netcat's `-e`/`-c`
// (`--exec`, `--sh-exec`), socat's `EXEC:`/`SYSTEM:` addresses, and variables whose value git,
// rsync or another program runs (`GIT_SSH_COMMAND`, `GIT_SSH`, `RSYNC_RSH`, `GIT_EXTERNAL_DIFF`,
// `GIT_EDITOR`, `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` naming a command key, an interactive
// bash's `PROMPT_COMMAND`, a `$(…)` in a prompt `PS0`..`PS4`, less's `LESS='+!…'`, ...), set as a
// command's prefix, a statement, `export` or `env`'s words. Each string is analysed as a script
// (rsync and git split or hand it to `sh -c`; ssh runs it with the user's shell), with the depth
// bound of the analysis; a program path alone is unwrapped as a one-word command.
import type { Node } from "./parser";
import type { SimpleCommand, Word } from "./types";
import { wordOf } from "./words";
import type { Context } from "./wrappers";
import { fromWords, inner } from "./runners";
import { commandOf } from "./git-code";

// Variables whose value is shell text a program runs, and those whose value is a program.
const SCRIPT_VARIABLES =
  /^(GIT_SSH_COMMAND|GIT_PROXY_COMMAND|RSYNC_RSH|RSYNC_CONNECT_PROG|GIT_EXTERNAL_DIFF|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|EDITOR|VISUAL|PAGER|MANPAGER|PROMPT_COMMAND)$/;
const PROGRAM_VARIABLES = /^(GIT_SSH|GIT_ASKPASS|SSH_ASKPASS)$/;
const SSH_KEYS = /^\s*(proxycommand|localcommand|knownhostscommand)(?:\s*=\s*|\s+)(.*)$/is;

export interface Setting {
  name: string;
  value: Word;
}

const script = (text: string, by: string, ctx: Context) =>
  text.trim() === "" ? [] : inner(ctx.analyse(text, { fed: true }), by);
const program = (text: string, by: string, ctx: Context, unwrap: Unwrap) =>
  text.trim() === "" ? [] : unwrap(fromWords([{ text, dynamic: false }], by), ctx);

type Unwrap = (cmd: SimpleCommand, ctx: Context) => SimpleCommand[];

/** The commands variables set on the line make a program run. */
export function variableCode(settings: readonly Setting[], ctx: Context, unwrap: Unwrap): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  for (const { name, value } of settings) {
    if (value.dynamic) continue;
    if (SCRIPT_VARIABLES.test(name)) out.push(...script(value.text, name, ctx));
    // A prompt is expanded as a string is before it is shown: `PS1='$(rm -rf /)'` runs rm.
    else if (/^PS[0124]$/.test(name) && /\$\(|`/.test(value.text)) out.push(...script(`: ${value.text}`, name, ctx));
    // less reads its options from LESS first: `+!cmd` runs cmd before the first page. Where
    // that command ends in the value is less's reading: listed as a reading.
    else if (name === "LESS") {
      const bang = /(?:^|\s)\+\+?!(.*)$/s.exec(value.text)?.[1] ?? "";
      const why = "less runs a command its `LESS` options give, read as far as the line shows";
      if (bang.trim() !== "") out.push(...inner(ctx.analyse(bang, {}), "less", why));
    } else if (PROGRAM_VARIABLES.test(name)) out.push(...program(value.text, name, ctx, unwrap));
    const key = /^GIT_CONFIG_KEY_(\d+)$/.exec(name);
    const v = key && settings.find((s) => s.name === `GIT_CONFIG_VALUE_${key[1]}`);
    const text = v && !v.value.dynamic ? commandOf(value.text, v.value.text) : undefined;
    if (text) out.push(...script(text, "git", ctx));
  }
  return out;
}

/** The settings of `variable_assignment` nodes (a prefix, a statement, `export`'s). */
export function nodeSettings(nodes: readonly Node[]): Setting[] {
  return nodes.flatMap((n) => {
    const name = n.type === "variable_assignment" ? n.childForFieldName("name")?.text : undefined;
    const value = n.childForFieldName("value");
    return name ? [{ name, value: value ? wordOf(value) : { text: "", dynamic: false } }] : [];
  });
}

/** `NAME=value` words as env and sudo take them (`env GIT_SSH_COMMAND=… git fetch`). */
export function wordSettings(words: readonly Word[]): Setting[] {
  return words.flatMap((w) => {
    const m = /^([A-Za-z_]\w*)=(.*)$/s.exec(w.text);
    return m && !w.dynamic ? [{ name: m[1], value: { text: m[2], dynamic: false } }] : [];
  });
}

// The values of a short option (`-o V`, `-oV`, after flags in a cluster: `-4o V`) and of long
// ones (`--rsh=V`, `--rsh V`). `flags`: the letters that may stand before it in a cluster.
function values(args: readonly Word[], letter: string, flags: string, long: string[] = []): Word[] {
  const out: Word[] = [];
  const short = new RegExp(`^-[${flags}]*?${letter}(.*)$`, "s");
  for (let i = 0; i < args.length; i++) {
    const w = args[i];
    if (w.text === "--") break;
    const eq = w.text.indexOf("=");
    const name = w.text.slice(0, eq < 0 ? undefined : eq);
    if (long.includes(name)) {
      const v = eq >= 0 ? { text: w.text.slice(eq + 1), dynamic: w.dynamic } : args[++i];
      if (v) out.push(v);
      continue;
    }
    const m = w.dynamic ? null : short.exec(w.text);
    if (!m) continue;
    const v = m[1] !== "" ? { text: m[1], dynamic: false } : args[++i];
    if (v) out.push(v);
  }
  return out;
}

const SSH_FLAGS = "1246AaCfGgKkMNnqsTtVvXxYy3dpRr";

/** What a client the line gives a command string runs locally, or undefined when none. */
export function clientCode(
  cmd: SimpleCommand,
  args: Word[],
  ctx: Context,
  unwrap: Unwrap,
): SimpleCommand[] | undefined {
  const name = cmd.argv[0].toLowerCase();
  const out: SimpleCommand[] = [];
  if (name === "ssh" || name === "scp" || name === "sftp") {
    for (const v of values(args, "o", SSH_FLAGS)) {
      const m = v.dynamic ? null : SSH_KEYS.exec(v.text);
      if (m) out.push(...script(m[2], name, ctx));
    }
    if (name !== "ssh")
      for (const v of [...values(args, "S", SSH_FLAGS), ...values(args, "D", SSH_FLAGS)])
        if (!v.dynamic) out.push(...program(v.text, name, ctx, unwrap));
  } else if (name === "rsync") {
    for (const v of values(args, "e", "a-zA-Z0-9", ["--rsh"])) if (!v.dynamic) out.push(...script(v.text, name, ctx));
  } else if (/^(nc|ncat|netcat|nc\.openbsd|nc\.traditional)$/.test(name)) {
    const flags = "46bCDdFhklNnrStUuvZz";
    for (const v of [...values(args, "e", flags, ["--exec"]), ...values(args, "c", flags, ["--sh-exec"])])
      if (!v.dynamic) out.push(...script(v.text, name, ctx));
  } else if (name === "socat") {
    for (const w of args)
      for (const address of w.dynamic ? [] : w.text.split("!!")) {
        const m = /^(exec|system):(.*)$/is.exec(address);
        if (m) out.push(...script(m[2].replace(/,[a-z-]+(=[^,]*)?$/i, ""), name, ctx));
      }
  }
  return out.length > 0 ? out : undefined;
}
