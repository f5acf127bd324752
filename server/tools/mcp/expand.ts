// `${VAR}` and `${VAR:-default}` in an MCP server entry (command, args, env and headers values,
// url), as Claude Code's .mcp.json has them, so a config file can be shared without its secrets.
// As in a shell, `:-` takes the default when the variable is unset or empty. A `${VAR}` that is
// unset and has no default is an error naming the variable and where it is: starting the server
// with the text left in (a literal "${GITHUB_TOKEN}" header) would fail later and less clearly.
// Anything else (`$VAR`, `${1}`, a lone `$`) is left as written.

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Vars = Record<string, string | undefined>;

/** The string with its references replaced, or the first one that cannot be. */
export function expandString(text: string, vars: Vars): { value: string } | { missing: string } {
  let missing: string | undefined;
  const value = text.replace(REF, (ref, name: string, fallback: string | undefined) => {
    const v = vars[name];
    if (fallback !== undefined) return v === undefined || v === "" ? fallback : v;
    if (v === undefined) missing ??= name;
    return v ?? ref;
  });
  return missing === undefined ? { value } : { missing };
}

const FIELDS = ["command", "args", "env", "url", "headers"] as const;

/**
 * A copy of the entry with the five fields expanded; values of another type are left for the
 * schema to reject. Throws an Error that says which variable is missing and in which field.
 */
export function expandEntry(entry: Record<string, unknown>, vars: Vars): Record<string, unknown> {
  const at = (where: string, text: string) => {
    const r = expandString(text, vars);
    if ("missing" in r)
      throw new Error(
        `\${${r.missing}} in ${where} is not set and has no default (write \${${r.missing}:-default} to give one)`,
      );
    return r.value;
  };
  const out = { ...entry };
  for (const field of FIELDS) {
    const v = entry[field];
    if (typeof v === "string") out[field] = at(field, v);
    else if (Array.isArray(v)) out[field] = v.map((s, i) => (typeof s === "string" ? at(`${field}[${i}]`, s) : s));
    else if (v && typeof v === "object") {
      out[field] = Object.fromEntries(
        Object.entries(v).map(([k, s]) => [k, typeof s === "string" ? at(`${field}.${k}`, s) : s]),
      );
    }
  }
  return out;
}
