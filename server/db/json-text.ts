// A Json column as SQLite keeps it (text), read outside Prisma: its value, or what the caller
// makes of text that does not parse. A corrupt column is a stored fact, not a crash: each reader
// says how it fails closed (a policy stays text for its validation to refuse, a mode list
// forbids every mode).
export function parseJsonText<T>(text: string, unparsable: (text: string) => T): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return unparsable(text);
  }
}
