"use client";
// The active org's people: members with their roles (a role select and Remove where the asker
// may, as the server says per member), Leave for oneself, and for owners and admins the invite
// form and the pending invitations (revoke, or a new link). What anyone may do is decided by the
// server (services/orgs-rules.ts); this page only shows it.
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { OrgSwitcher } from "../../_components/org-switcher";
import { InviteForm } from "./invite-form";
import { Invitations } from "./invitations";
import { VisibleText } from "../../_lib/visible-text";
import styles from "./members.module.css";

const ROLE_LABEL = { owner: "Owner", admin: "Admin", member: "Member" } as const;

export default function MembersPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const mine = useQuery(trpc.orgs.mine.queryOptions());
  const members = useQuery(trpc.orgs.members.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.orgs.pathKey() });
  const changeRole = useMutation(trpc.orgs.changeRole.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.orgs.remove.mutationOptions({ onSettled: refresh }));
  const leave = useMutation(trpc.orgs.leave.mutationOptions({ onSuccess: () => location.assign("/") }));

  const org = mine.data?.orgs.find((o) => o.id === mine.data?.activeOrgId);
  const me = members.data?.find((m) => m.you);
  const manages = me?.role === "owner" || me?.role === "admin";
  const failure = changeRole.error ?? remove.error ?? leave.error;

  return (
    <main className={styles.page} data-testid="members-page">
      <header className={styles.header}>
        <h1>Members{org ? ` of ${org.name}` : ""}</h1>
        <OrgSwitcher />
        <Link href="/settings/policy">Tool policy</Link>
        <Link href="/">Sessions</Link>
      </header>
      {mine.data && !mine.data.accounts && (
        <p className={styles.notice} data-testid="members-no-accounts">
          Quiver runs without accounts: you are its one local person. <a href="/signup">Create the first account</a> to
          invite teammates and have several orgs.
        </p>
      )}
      {(members.error || mine.error) && (
        <p className={styles.error}>Could not load the members: {(members.error ?? mine.error)?.message}</p>
      )}
      {failure && (
        <p className={styles.error} role="alert" data-testid="members-error">
          {failure.message}
        </p>
      )}
      <table className={styles.table} data-testid="member-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Role</th>
            <th>Joined</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {members.data?.map((m) => (
            <tr key={m.id} data-testid="member-row" data-email={m.email} data-role={m.role}>
              <td>
                <VisibleText text={m.name} /> {m.you && <span className="muted">(you)</span>}
              </td>
              <td className={styles.mono}>{m.email}</td>
              <td>
                {m.roles.length === 0 ? (
                  ROLE_LABEL[m.role]
                ) : (
                  <select
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={changeRole.isPending}
                    onChange={(e) => {
                      const role = e.target.value as keyof typeof ROLE_LABEL;
                      const down = m.you && role !== m.role;
                      if (
                        !down ||
                        confirm(
                          `Give yourself the role ${ROLE_LABEL[role]}? You cannot take a higher role back yourself.`,
                        )
                      )
                        changeRole.mutate({ memberId: m.id, role });
                    }}
                    data-testid="member-role"
                  >
                    {[m.role, ...m.roles].map((r) => (
                      <option key={r} value={r}>
                        {ROLE_LABEL[r]}
                      </option>
                    ))}
                  </select>
                )}
              </td>
              <td className="muted">{new Date(m.joinedAt).toLocaleDateString()}</td>
              <td className={styles.actions}>
                {m.removable && (
                  <button
                    type="button"
                    onClick={() =>
                      confirm(`Remove ${m.email} from ${org?.name ?? "the org"}? Their open pages close at once.`) &&
                      remove.mutate({ memberId: m.id })
                    }
                    disabled={remove.isPending}
                    data-testid="member-remove"
                  >
                    Remove
                  </button>
                )}
                {m.you && mine.data && mine.data.orgs.length > 1 && (
                  <button
                    type="button"
                    onClick={() => org && confirm(`Leave ${org.name}?`) && leave.mutate({ orgId: org.id })}
                    disabled={leave.isPending}
                    data-testid="member-leave"
                  >
                    Leave
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {manages && mine.data?.accounts && me && (
        <>
          <h2 className={styles.h2}>Invite</h2>
          <InviteForm myRole={me.role} />
          <h2 className={styles.h2}>Pending invitations</h2>
          <Invitations myRole={me.role} />
        </>
      )}
    </main>
  );
}
