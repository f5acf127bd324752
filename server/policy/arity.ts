// The words a session approval names a command by (`git log`, `npm run build`), found the way
// the program reads its options: `git -C sub log` is `git log`, not `git sub`. An option before
// those words that the table below does not know may take the next word as its value (or change
// what runs), so then no prefix is given and the approval covers the exact command only: an
// unknown option narrows an approval, never widens it.

interface Options {
  /** Options that take the next word (or `=value` glued) as their value: both skipped. */
  value?: string[];
  /** Options that take no value: skipped. */
  flag?: string[];
  /** Options whose value is what runs (`python3 -m pytest`): kept, and counted as a word. */
  names?: string[];
}

const DOCKER: Options = {
  value: ["-H", "--host", "--context", "-c", "--config", "-l", "--log-level"].concat(
    // docker compose's, before its sub-command
    ["-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory"],
  ),
  flag: ["-D", "--debug"],
};
const PYTHON: Options = {
  value: ["-W", "-X"],
  flag: ["-u", "-B", "-O", "-OO", "-E", "-I", "-s", "-S", "-q", "-b", "-bb", "-d", "-v", "-R", "-P"],
  names: ["-m"],
};
const PIP: Options = {
  flag: ["-q", "--quiet", "-v", "--verbose", "--disable-pip-version-check", "--no-cache-dir", "--isolated"],
};

const OPTIONS: Record<string, Options> = {
  git: {
    value: ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path"],
    flag: [
      "--no-pager",
      "-P",
      "-p",
      "--paginate",
      "--bare",
      "--no-replace-objects",
      "--literal-pathspecs",
      "--glob-pathspecs",
      "--noglob-pathspecs",
      "--icase-pathspecs",
      "--no-optional-locks",
      "--no-advice",
    ],
  },
  npm: {
    value: ["--prefix", "-C", "-w", "--workspace", "--loglevel"],
    flag: ["-s", "--silent", "-q", "--quiet", "-d", "--verbose", "-ws", "--workspaces", "--if-present", "-y", "--yes"],
  },
  pnpm: {
    value: ["-C", "--dir", "--filter", "-F"],
    flag: ["-s", "--silent", "-r", "--recursive", "-w", "--workspace-root", "--if-present"],
  },
  yarn: { value: ["--cwd"], flag: ["-s", "--silent"] },
  bun: { value: ["--cwd", "--filter"], flag: ["--silent"] },
  npx: { flag: ["-y", "--yes", "-q", "--quiet"] },
  kubectl: {
    value: [
      "-n",
      "--namespace",
      "--context",
      "--cluster",
      "--user",
      "-s",
      "--server",
      "--kubeconfig",
      "-f",
      "--filename",
      "-o",
      "--output",
      "-l",
      "--selector",
      "-c",
      "--container",
      "--as",
      "--token",
      "--request-timeout",
      "-v",
      "--v",
    ],
    flag: ["-A", "--all-namespaces", "--insecure-skip-tls-verify"],
  },
  helm: { value: ["-n", "--namespace", "--kube-context", "--kubeconfig"], flag: ["--debug"] },
  docker: DOCKER,
  podman: DOCKER,
  cargo: {
    value: ["--color", "-Z"],
    flag: ["-v", "-vv", "--verbose", "-q", "--quiet", "--offline", "--locked", "--frozen"],
  },
  python: PYTHON,
  python3: PYTHON,
  node: { flag: ["--no-warnings", "--enable-source-maps", "--trace-warnings", "--trace-uncaught"] },
  gh: { value: ["-R", "--repo"] },
  aws: {
    value: ["--region", "--profile", "--output", "--query", "--color", "--cli-read-timeout", "--cli-connect-timeout"],
    flag: ["--debug", "--no-paginate", "--no-cli-pager"],
  },
  gcloud: { value: ["--project", "--account", "--configuration", "--format", "--verbosity"], flag: ["-q", "--quiet"] },
  az: { value: ["--subscription", "-o", "--output", "--query"], flag: ["--debug", "--verbose", "--only-show-errors"] },
  make: {
    value: ["-C", "--directory", "-f", "--file", "--makefile"],
    flag: ["-s", "--silent", "-k", "--keep-going", "-B", "--always-make", "-w", "--no-print-directory"],
  },
  systemctl: {
    value: ["-H", "--host", "-M", "--machine"],
    flag: ["--user", "--system", "--no-pager", "-q", "--quiet"],
  },
  terraform: { value: ["-chdir"] },
  pip: PIP,
  pip3: PIP,
  uv: { value: ["--directory", "--project"], flag: ["-q", "--quiet", "-v", "--verbose", "--offline", "--no-cache"] },
  poetry: { value: ["-C", "--directory", "-P", "--project"], flag: ["-q", "--quiet", "-v", "-n", "--no-interaction"] },
  mvn: {
    value: ["-f", "--file", "-pl", "--projects", "-P", "--activate-profiles"],
    flag: ["-q", "--quiet", "-B", "--batch-mode", "-o", "--offline", "-U", "-e", "-X"],
  },
};

// `cargo +nightly test`: a toolchain, kept in the prefix (it picks which cargo runs).
const TOOLCHAIN = new Set(["cargo", "rustup", "rustc"]);

/**
 * The program and as many sub-command words as `arity` says (asked again after each word, so
 * `npm run` can ask for a third), with the options before them skipped as the program reads
 * them; undefined when an option there is one this table does not know.
 */
export function subcommandWords(argv: readonly string[], arity: (named: string[]) => number): string[] | undefined {
  const program = argv[0];
  const table = Object.hasOwn(OPTIONS, program) ? OPTIONS[program] : {};
  const named = [program];
  const prefix = [program];
  for (let i = 1; i < argv.length && named.length < arity(named);) {
    const w = argv[i];
    if (i === 1 && TOOLCHAIN.has(program) && w.startsWith("+")) {
      prefix.push(w);
      i++;
    } else if (!w.startsWith("-") || w === "-") {
      named.push(w);
      prefix.push(w);
      i++;
    } else if (table.names?.includes(w) && i + 1 < argv.length) {
      named.push(argv[i + 1]);
      prefix.push(w, argv[i + 1]);
      i += 2;
    } else if (table.flag?.includes(w)) i++;
    else if (table.value?.includes(w) && i + 1 < argv.length) i += 2;
    else if (w.includes("=") && table.value?.includes(w.slice(0, w.indexOf("=")))) i++;
    else return undefined;
  }
  return prefix;
}
