"use client";
// The org's pending invitations (expired ones too, marked): revoke one, or make a new link for the
// same email and role (the old link stops working; links are shown only when made).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { InvitationLink, invitableRoles } from "./invite-form";
import styles from "./members.module.css";

export function Invitations({ myRole }: { myRole: "owner" | "admin" | "member" }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.orgs.invitations.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.orgs.invitations.queryKey() });
  const revoke = useMutation(trpc.orgs.revokeInvitation.mutationOptions({ onSettled: refresh }));
  const relink = useMutation(trpc.orgs.invite.mutationOptions({ onSettled: refresh }));
  if (list.error) return <p className={styles.error}>Could not load the invitations: {list.error.message}</p>;
  return (
    <>
      {(revoke.error ?? relink.error) && (
        <p className={styles.error} role="alert">
          {(revoke.error ?? relink.error)?.message}
        </p>
      )}
      <table className={styles.table} data-testid="invitation-list">
        <thead>
          <tr>
            <th>Email</th>
            <th>Role</th>
            <th>Expires</th>
            <th>Invited by</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data?.length === 0 && (
            <tr>
              <td colSpan={5} className="muted">
                None.
              </td>
            </tr>
          )}
          {list.data?.map((inv) => (
            <tr key={inv.id} data-testid="invitation-row" data-email={inv.email} data-state={inv.state}>
              <td className={styles.mono}>{inv.email}</td>
              <td>{inv.role}</td>
              <td className={inv.state === "expired" ? styles.error : "muted"}>
                {inv.state === "expired" ? "expired" : new Date(inv.expiresAt).toLocaleString()}
              </td>
              <td className="muted">{inv.invitedBy}</td>
              <td className={styles.actions}>
                {invitableRoles(myRole).includes(inv.role) && (
                  <button
                    type="button"
                    disabled={relink.isPending}
                    onClick={() => relink.mutate({ email: inv.email, role: inv.role, origin: location.origin })}
                    data-testid="invitation-relink"
                  >
                    New link
                  </button>
                )}
                <button
                  type="button"
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate({ invitationId: inv.id })}
                  data-testid="invitation-revoke"
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {relink.data && (
        <InvitationLink
          path={relink.data.path}
          email={relink.data.invitation.email}
          mailed={relink.data.mailed}
          mailError={relink.data.mailError}
        />
      )}
    </>
  );
}
