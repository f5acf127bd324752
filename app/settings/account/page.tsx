"use client";
// The person's own account: their name, a password change, the devices signed in as them (each
// can be signed out; its open IDE tabs close at once), and signing out here.
import Link from "next/link";
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { authCall } from "../../signin/auth-client";
import styles from "./account.module.css";

interface Me {
  user: { name: string; email: string };
  session: { id: string };
}
interface Device {
  id: string;
  userAgent: string | null;
  ipAddress: string | null;
  createdAt: string;
  updatedAt: string;
  current: boolean;
}

/** "Chromium on Linux" from a user agent, else the raw text. */
function describeAgent(ua: string | null): string {
  if (!ua) return "Unknown browser";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(ua)
        ? "Chromium"
        : /Safari\//.test(ua)
          ? "Safari"
          : null;
  const os = /Windows/.test(ua)
    ? "Windows"
    : /Mac OS X/.test(ua)
      ? "macOS"
      : /Android/.test(ua)
        ? "Android"
        : /Linux/.test(ua)
          ? "Linux"
          : /iPhone|iPad/.test(ua)
            ? "iOS"
            : null;
  return browser ? `${browser}${os ? ` on ${os}` : ""}` : ua.slice(0, 80);
}

type Note = { kind: "ok" | "error"; text: string } | null;

export default function AccountPage() {
  const [me, setMe] = useState<Me | null>(null);
  const [devices, setDevices] = useState<Device[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [nameNote, setNameNote] = useState<Note>(null);
  const [passwordNote, setPasswordNote] = useState<Note>(null);
  const [deviceNote, setDeviceNote] = useState<Note>(null);

  const loadDevices = useCallback(
    () =>
      authCall<{ devices: Device[] }>("/devices").then(
        (d) => setDevices(d.devices),
        (err: Error) => setError(err.message),
      ),
    [],
  );
  useEffect(() => {
    authCall<Me | null>("/get-session").then(
      (m) => (m ? setMe(m) : window.location.assign("/signin?next=/settings/account")),
      (err: Error) => setError(err.message),
    );
    void loadDevices();
  }, [loadDevices]);

  async function rename(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const name = String(new FormData(e.currentTarget).get("name")).trim();
    try {
      await authCall("/update-user", { name });
      setMe((m) => (m ? { ...m, user: { ...m.user, name } } : m));
      setNameNote({ kind: "ok", text: "Name saved." });
    } catch (err) {
      setNameNote({ kind: "error", text: (err as Error).message });
    }
  }

  async function changePassword(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    if (form.get("newPassword") !== form.get("again"))
      return setPasswordNote({ kind: "error", text: "The two new passwords differ." });
    try {
      await authCall("/change-password", {
        currentPassword: String(form.get("currentPassword")),
        newPassword: String(form.get("newPassword")),
        revokeOtherSessions: form.get("others") === "on",
      });
      formEl.reset();
      setPasswordNote({ kind: "ok", text: "Password changed." });
      void loadDevices();
    } catch (err) {
      setPasswordNote({ kind: "error", text: (err as Error).message });
    }
  }

  async function revoke(device: Device) {
    try {
      if (device.current) {
        await authCall("/sign-out", {});
        return window.location.assign("/signin");
      }
      await authCall("/devices/revoke", { id: device.id });
      setDeviceNote({ kind: "ok", text: `${describeAgent(device.userAgent)} is signed out.` });
      void loadDevices();
    } catch (err) {
      setDeviceNote({ kind: "error", text: (err as Error).message });
    }
  }

  if (error)
    return (
      <main className={styles.page}>
        <p className={styles.error}>Could not load your account: {error}</p>
      </main>
    );
  if (!me) return <main className={styles.page}>Loading your account…</main>;
  const note = (n: Note, id: string) =>
    n && (
      <p className={styles[n.kind]} role={n.kind === "error" ? "alert" : "status"} data-testid={id}>
        {n.text}
      </p>
    );

  return (
    <main className={styles.page} data-testid="account-page">
      <header className={styles.header}>
        <h1>Your account</h1>
        <Link href="/">Sessions</Link>
      </header>
      <p className="muted" data-testid="account-email">
        Signed in as {me.user.email}.
      </p>

      <section className={styles.section} aria-labelledby="account-name">
        <h2 id="account-name">Name</h2>
        <form className={styles.form} onSubmit={rename}>
          <label>
            Name
            <input name="name" defaultValue={me.user.name} maxLength={100} required />
          </label>
          <button type="submit">Save name</button>
        </form>
        {note(nameNote, "name-note")}
      </section>

      <section className={styles.section} aria-labelledby="account-password">
        <h2 id="account-password">Password</h2>
        <form className={styles.form} onSubmit={changePassword}>
          <label>
            Current password
            <input name="currentPassword" type="password" autoComplete="current-password" required />
          </label>
          <label>
            New password
            <input
              name="newPassword"
              type="password"
              autoComplete="new-password"
              minLength={10}
              maxLength={256}
              required
            />
          </label>
          <label>
            New password again
            <input name="again" type="password" autoComplete="new-password" minLength={10} maxLength={256} required />
          </label>
          <label className={styles.check}>
            <input name="others" type="checkbox" defaultChecked /> Sign out my other devices
          </label>
          <button type="submit" className={styles.primary}>
            Change password
          </button>
        </form>
        {note(passwordNote, "password-note")}
      </section>

      <section className={styles.section} aria-labelledby="account-devices">
        <h2 id="account-devices">Signed in on these devices</h2>
        <table className={styles.devices} data-testid="devices">
          <thead>
            <tr>
              <th>Device</th>
              <th>Address</th>
              <th>Signed in</th>
              <th>Last seen</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(devices ?? []).map((d) => (
              <tr key={d.id} data-testid="device" data-current={d.current ? "yes" : "no"}>
                <td>
                  {describeAgent(d.userAgent)}
                  {d.current && <strong> (this device)</strong>}
                </td>
                <td>{d.ipAddress ?? "—"}</td>
                <td>{new Date(d.createdAt).toLocaleString()}</td>
                <td>{new Date(d.updatedAt).toLocaleString()}</td>
                <td>
                  <button type="button" onClick={() => void revoke(d)} data-testid="device-revoke">
                    {d.current ? "Sign out" : "Sign out this device"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {note(deviceNote, "device-note")}
      </section>
    </main>
  );
}
