// npm's command names as npm 11 reads them (lib/utils/cmd-list.js): a command, an alias, or any
// unique prefix of either (`npm pub` is `npm publish`), camelCase read as kebab-case. A rule on
// `npm publish` compares the command npm will run, not the word the line spells.
const COMMANDS = (
  "access adduser approve-scripts audit bugs cache ci completion config dedupe deny-scripts deprecate " +
  "diff dist-tag docs doctor edit exec explain explore find-dupes fund get help help-search init install " +
  "install-ci-test install-scripts install-test link ll login logout ls org outdated owner pack ping pkg " +
  "prefix profile prune publish query rebuild repo restart root run sbom search set shrinkwrap stage star " +
  "stars start stop team test token trust undeprecate uninstall unpublish unstar update version view whoami"
).split(" ");

const ALIASES: Record<string, string> = {
  author: "owner",
  home: "docs",
  issues: "bugs",
  info: "view",
  show: "view",
  find: "search",
  add: "install",
  unlink: "uninstall",
  remove: "uninstall",
  rm: "uninstall",
  r: "uninstall",
  un: "uninstall",
  rb: "rebuild",
  list: "ls",
  ln: "link",
  create: "init",
  i: "install",
  it: "install-test",
  cit: "install-ci-test",
  u: "update",
  up: "update",
  c: "config",
  s: "search",
  se: "search",
  tst: "test",
  t: "test",
  ddp: "dedupe",
  v: "view",
  "run-script": "run",
  "clean-install": "ci",
  "clean-install-test": "install-ci-test",
  x: "exec",
  why: "explain",
  la: "ll",
  verison: "version",
  ic: "ci",
  innit: "init",
  in: "install",
  ins: "install",
  inst: "install",
  insta: "install",
  instal: "install",
  isnt: "install",
  isnta: "install",
  isntal: "install",
  isntall: "install",
  "install-clean": "ci",
  "isntall-clean": "ci",
  hlep: "help",
  "dist-tags": "dist-tag",
  upgrade: "update",
  udpate: "update",
  rum: "run",
  sit: "install-ci-test",
  urn: "run",
  ogr: "org",
  "add-user": "adduser",
};

const NAMES = [...COMMANDS, ...Object.keys(ALIASES)];

/** The npm command `word` names, or undefined when it names none (or more than one). */
export function npmCommand(word: string): string | undefined {
  const c = /[A-Z]/.test(word) ? word.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`) : word;
  if (COMMANDS.includes(c)) return c;
  if (Object.hasOwn(ALIASES, c)) return ALIASES[c];
  const hits = NAMES.filter((n) => n.startsWith(c));
  if (c === "" || hits.length !== 1) return undefined;
  let named = hits[0];
  while (Object.hasOwn(ALIASES, named)) named = ALIASES[named];
  return named;
}
