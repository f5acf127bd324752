// Test harness (tests only): what the SSO domain tests share, per database: a migrated test
// database, a real OpenID Connect provider for the settings' issuer, a real DNS server on a local
// port for the TXT records, and the SSO service on the query thread's client, as in the server
// (batched transactions only). Made in a beforeAll, closed in an afterAll of the caller's describe.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { startQueryThread, type QueryThread } from "../db/query-thread";
import type { DbProvider } from "../db";
import { createSsoService, type SsoService } from "../services/sso";
import { dnsTxtLookup, type TxtLookup } from "../services/sso-domains";
import { useTestDb } from "./db";
import { startTestDns, type TestDns } from "./dns-server";
import { startOidcIdp, type TestIdp } from "./oidc-idp";

export interface SsoDnsFixture {
  t: ReturnType<typeof useTestDb>;
  /** The data folder's key the records' tokens are made under. */
  key: Buffer;
  idp: TestIdp;
  dns: TestDns;
  thread: QueryThread;
  txtLookup: TxtLookup;
  sso: SsoService;
}

export function useSsoDns(provider: DbProvider): SsoDnsFixture {
  const f = { t: useTestDb(provider), key: randomBytes(32) } as SsoDnsFixture;
  beforeAll(async () => {
    f.idp = await startOidcIdp({ users: [] });
    f.dns = await startTestDns();
    f.thread = startQueryThread(f.t.current.url);
    f.txtLookup = dnsTxtLookup([f.dns.server]);
    f.sso = createSsoService({ db: f.thread.db, key: f.key, privateIssuers: [f.idp.issuer], txtLookup: f.txtLookup });
  }, 60_000);
  afterAll(async () => {
    await f.thread?.close();
    await f.idp?.close();
    await f.dns?.close();
  });
  return f;
}
