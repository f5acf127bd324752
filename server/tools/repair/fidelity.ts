// Fidelity of a repaired value to the value the model meant: equal, or, for a cut-off call, a
// faithful prefix (every complete value equal; only the last value on the cut path may be
// partial: a string prefix, a shorter number, a shorter container).

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object),
    kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function isFaithfulPrefix(repaired: unknown, original: unknown): boolean {
  if (deepEqual(repaired, original)) return true;
  if (typeof repaired === "string") return typeof original === "string" && original.startsWith(repaired);
  if (typeof repaired === "number") return typeof original === "number";
  if (Array.isArray(repaired)) {
    if (!Array.isArray(original) || repaired.length > original.length) return false;
    const last = repaired.length - 1;
    for (let i = 0; i < last; i++) if (!deepEqual(repaired[i], original[i])) return false;
    return last < 0 || isFaithfulPrefix(repaired[last], original[last]);
  }
  if (repaired && typeof repaired === "object") {
    if (!original || typeof original !== "object" || Array.isArray(original)) return false;
    const rk = Object.keys(repaired),
      ok = Object.keys(original);
    if (rk.length > ok.length || rk.some((k, i) => k !== ok[i])) return false;
    const r = repaired as Record<string, unknown>,
      o = original as Record<string, unknown>;
    for (let i = 0; i < rk.length - 1; i++) if (!deepEqual(r[rk[i]], o[rk[i]])) return false;
    return rk.length === 0 || isFaithfulPrefix(r[rk[rk.length - 1]], o[rk[rk.length - 1]]);
  }
  return false;
}
