// The time every event carries (`at`, ISO text to the millisecond), made once per millisecond
// and read back as a number without parsing when it is the text made here last. At thousands
// of tokens a second, toISOString was a third of the hub's cost per token, and a delta run
// (delta-run.ts) parsed each delta's time back and formatted it again to check it.

let madeMs = -1;
let madeIso = "";

export function isoNow(): string {
  const now = Date.now();
  if (now !== madeMs) {
    madeMs = now;
    madeIso = new Date(now).toISOString();
  }
  return madeIso;
}

/** The milliseconds of `at` when it is an ISO time that formats back to exactly `at` (every
 *  time isoNow makes), else NaN. */
export function msOfIso(at: string): number {
  if (at === madeIso) return madeMs;
  const ms = Date.parse(at);
  return ms >= 0 && new Date(ms).toISOString() === at ? ms : NaN;
}
