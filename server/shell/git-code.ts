// What git itself runs as a shell command given on the line. git hands some option values and
// config values to `sh -c` (run-command.c's prepare_shell_cmd, with `"$@"` after the text when
// it passes arguments): `--upload-pack`, `--receive-pack`, `--exec`, `grep -O`, `-c
// core.pager=…`, `alias.x=!…`, and values a `git config` on the line stores for a later git to
// run (`git config core.fsmonitor '…'; git status`). Each such text is analysed as a script, so
// a denied command in it is denied; one only known at run time leaves git opaque. `-c` and
// `--exec-path` stay opaque whatever the key (git runs many more things than this table names),
// and so do sub-commands that run a command given on the line (`rebase --exec`), whose strings
// are analysed all the same.
import type { SimpleCommand, Word } from "./types";
import type { Context } from "./wrappers";
import { inner, opaque } from "./runners";

// Config keys whose value git runs as a shell command, matched on the key folded to lower case
// (git folds the section and the last part; a subsection's case does not matter for a match
// here). `bang`: only a value starting with `!` is a command (an alias, a credential helper,
// `submodule.<n>.update`); the text after it runs.
const COMMAND_KEYS: { key: RegExp; bang?: true; args?: false }[] = [
  { key: /^core\.pager$|^pager\..+$/, args: false },
  { key: /^core\.(editor|sshcommand|fsmonitor|askpass|gitproxy)$|^sequence\.editor$/ },
  { key: /^diff\.external$|^diff\..+\.(textconv|command)$|^interactive\.difffilter$/ },
  { key: /^filter\..+\.(clean|smudge|process)$/, args: false },
  { key: /^merge\..+\.driver$|^(merge|diff)tool\..+\.cmd$|^(browser|man)\..+\.cmd$/ },
  { key: /^gpg\.program$|^gpg\..+\.program$|^uploadpack\.packobjectshook$|^sendemail\.sendmailcmd$/ },
  { key: /^remote\..+\.(uploadpack|receivepack)$|^trailer\..+\.(command|cmd)$/ },
  { key: /^alias\..+$|^credential(\..+)?\.helper$|^submodule\..+\.update$/, bang: true },
];

/** The shell text a config value is run as, or undefined when the key runs no command. */
export function commandOf(key: string, value: string): string | undefined {
  const k = key.toLowerCase();
  const hit = COMMAND_KEYS.find((c) => c.key.test(k));
  if (!hit) return undefined;
  if (hit.bang) return value.startsWith("!") ? withArgs(value.slice(1), true) : undefined;
  return withArgs(value, hit.args !== false);
}

// git appends the arguments it passes as `"$@"`; with one only known at run time in the text, a
// rule on the program's options cannot be ruled out by the words the line shows.
const withArgs = (text: string, args: boolean) => (args ? `${text} "$@"` : text);

const GLOBAL_VALUE = ["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "-c", "--config-env"];

// Sub-command options whose value git runs with `sh -c` (`--upload-pack=…`, `-u …` for clone),
// and grep's `-O`/`--open-files-in-pager`, which take their value only glued.
const RUN_OPTIONS: Record<string, { long: string[]; short?: string; glued?: true }> = {
  "ls-remote": { long: ["upload-pack", "exec"] },
  fetch: { long: ["upload-pack"] },
  pull: { long: ["upload-pack"] },
  clone: { long: ["upload-pack"], short: "u" },
  "fetch-pack": { long: ["upload-pack", "exec"] },
  push: { long: ["receive-pack", "exec"] },
  "send-pack": { long: ["receive-pack", "exec"] },
  archive: { long: ["exec"] },
  grep: { long: ["open-files-in-pager"], short: "O", glued: true },
  rebase: { long: ["exec"], short: "x" },
};

/** Values of `--name=V`, `--name V` (or any prefix of name git accepts) and `-xV`/`-x V`. */
function optionValues(flags: readonly Word[], spec: (typeof RUN_OPTIONS)[string]): (Word | undefined)[] {
  const out: (Word | undefined)[] = [];
  for (let i = 0; i < flags.length; i++) {
    const w = flags[i];
    if (w.text === "--") break;
    const t = w.text;
    if (w.dynamic && !w.oneWord) {
      // `--upload-pack=$X`, or a word that may become one: what runs is unknown.
      if (t.startsWith("-")) out.push(undefined);
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const name = t.slice(2, eq < 0 ? undefined : eq);
      if (name.length < 2 || !spec.long.some((l) => l.startsWith(name))) continue;
      if (eq >= 0) out.push(w.dynamic ? undefined : { text: t.slice(eq + 1), dynamic: false });
      else if (spec.glued) out.push({ text: "", dynamic: false });
      else out.push(flags[++i]);
      continue;
    }
    if (!spec.short || !t.startsWith("-")) continue;
    // A cluster: `-ix 'cmd'`, `-O'less'`; a letter before `x` that takes a value is rare enough
    // that reading the rest as the value errs toward analysing more.
    const at = t.indexOf(spec.short, 1);
    if (at < 0 || !/^-[a-zA-Z0-9]+/.test(t)) continue;
    const rest = t.slice(at + 1);
    if (rest !== "") out.push(w.dynamic ? undefined : { text: rest, dynamic: false });
    else if (spec.glued) out.push({ text: "", dynamic: false });
    else out.push(flags[++i]);
  }
  return out;
}

/** git, and what it runs as shell text the line gives (see the header). */
export function git(cmd: SimpleCommand, args: Word[], ctx: Context): SimpleCommand[] {
  const texts: (string | undefined)[] = [];
  let why: string | undefined;
  let at = 0;
  for (; at < args.length && args[at].text.startsWith("-"); at++) {
    const w = args[at].text;
    if (/^(-c|--config-env|--exec-path)/.test(w)) why ??= "`git -c` / `--exec-path` can name a program for git to run";
    if (w === "-c") {
      const v = args[at + 1];
      const eq = v?.text.indexOf("=") ?? -1;
      const text = v && eq > 0 && !v.dynamic ? commandOf(v.text.slice(0, eq), v.text.slice(eq + 1)) : undefined;
      if (v?.dynamic) texts.push(undefined);
      else if (text !== undefined) texts.push(text);
    }
    if (GLOBAL_VALUE.includes(w)) at++;
  }
  const sub = args[at]?.text;
  const rest = args.slice(at + 1);
  const words = rest.filter((w) => !w.text.startsWith("-")).map((w) => w.text);
  const runs = sub !== undefined && Object.hasOwn(RUN_OPTIONS, sub) ? optionValues(rest, RUN_OPTIONS[sub]) : [];
  // grep runs its pager with the matching files' names after it.
  texts.push(...runs.map((v) => (v === undefined || v.dynamic ? undefined : withArgs(v.text, sub !== "rebase"))));
  if (sub === "config") texts.push(...configValues(rest));
  // `git clone -c KEY=VALUE` writes the new repository's config before its checkout, whose hooks
  // (`core.hooksPath`, a `--template`'s hooks/) then run: as open as `git -c`.
  if (sub === "clone") {
    const set = optionValues(rest, { long: ["config"], short: "c" });
    for (const v of set) texts.push(v === undefined || v.dynamic ? undefined : configText(v.text));
    if (set.length > 0) why ??= "`git clone -c` sets configuration that can name a program for git to run";
    if (optionValues(rest, { long: ["template"] }).length > 0)
      why ??= "`git clone --template` copies in hooks that its checkout runs";
  }
  // `ext::` runs the command the URL names, once a config allows the protocol.
  if (rest.some((w) => /^ext::/i.test(w.text))) why ??= "an `ext::` remote runs a command given in its URL";
  if (sub === "rebase" && runs.length > 0) why ??= "`git rebase --exec` runs a command given on the line";
  if (
    (sub === "submodule" && words.includes("foreach")) ||
    (sub === "bisect" && words.includes("run")) ||
    sub === "filter-branch" ||
    (sub === "difftool" && rest.some((w) => /^(-x|--extcmd)/.test(w.text)))
  )
    why ??= `\`git ${sub}\` runs a command given on the line`;
  // A value only known at run time: the text git runs is unknown.
  if (texts.some((t) => t === undefined)) return [opaque(cmd, "git runs a command only known at run time")];
  // `grep -O` with no value runs the configured pager; an empty text is no command.
  const scripts = (texts as string[]).filter((t) => t.trim() !== "" && t.trim() !== '"$@"');
  const ran = scripts.flatMap((t) => inner(ctx.analyse(t, { fed: true }), "git"));
  return [why ? opaque(cmd, why) : cmd, ...ran];
}

// `KEY=VALUE` as `-c` gives it: the text git runs for a command key, "" (no command) otherwise.
function configText(kv: string): string {
  const eq = kv.indexOf("=");
  return (eq > 0 ? commandOf(kv.slice(0, eq), kv.slice(eq + 1)) : undefined) ?? "";
}

// `git config [options] KEY VALUE` (`set`, `--add`, `--replace-all`, any scope): a value for a
// key git runs as a command is code that will run. Every word after a command key is read as
// its value, which errs toward analysing more.
function configValues(rest: readonly Word[]): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  for (let i = 0; i + 1 < rest.length; i++) {
    const k = rest[i];
    if (k.dynamic || k.text.startsWith("-")) continue;
    const v = rest[i + 1];
    if (!COMMAND_KEYS.some((c) => c.key.test(k.text.toLowerCase()))) continue;
    if (v.dynamic) out.push(undefined);
    else out.push(commandOf(k.text, v.text));
  }
  return out;
}
