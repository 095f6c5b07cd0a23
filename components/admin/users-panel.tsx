"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useTranslations } from "next-intl";
import { useState } from "react";
import { ROLES, type TRole, type TUserStatus, USER_STATUSES } from "@/server/core/vocabulary";
import { useMe } from "../app-shell";
import { DataTable } from "../list-kit/data-table";
import { USER_STATUS_TONE, useVocab } from "../list-kit/labels";
import { ListStates } from "../list-kit/list-states";
import { keysetPages, LoadOlder, loadedRows, PAGE_SIZE } from "../list-kit/load-older";
import { TimeAgo } from "../time-labels";
import { useTRPC } from "../trpc-provider";
import { TwoStepAction } from "../two-step-action";
import { useErrorSentence } from "../use-error-sentence";

const isRole = (v: string): v is TRole => (ROLES as readonly string[]).includes(v);
const isUserStatus = (v: string): v is TUserStatus => (USER_STATUSES as readonly string[]).includes(v);

type TConfirming = { userId: string; action: "disable" | "delete" | "offboard" } | null;

/** An admin's rename of one user, in place of the name until saved or cancelled. */
function RenameForm({ user, busy, onSave, onCancel }: { user: { id: string; name: string }; busy: boolean; onSave: (name: string) => void; onCancel: () => void }) {
  const t = useTranslations("admin.users");
  const [name, setName] = useState(user.name);
  return (
    <form
      className="rename-form"
      data-testid="rename-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(name);
      }}
    >
      <input className="input input-compact" aria-label={t("newName", { name: user.name })} title={t("renameHint")} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} disabled={busy} />
      <button type="submit" className="btn btn-primary btn-small" disabled={busy || name.trim() === "" || name === user.name}>
        {t("renameSave")}
      </button>
      <button type="button" className="btn btn-quiet btn-small" onClick={onCancel} disabled={busy}>
        {t("renameCancel")}
      </button>
    </form>
  );
}

/** Users and roles: admins change roles, disable, enable, offboard and delete (never themselves); others read. */
export function UsersPanel() {
  const t = useTranslations("admin.users");
  const col = useTranslations("columns");
  const vocab = useVocab();
  const trpc = useTRPC();
  const errorText = useErrorSentence();
  const me = useMe();
  const queryClient = useQueryClient();
  const users = useInfiniteQuery(trpc.admin.usersPage.infiniteQueryOptions({ limit: PAGE_SIZE }, keysetPages));
  const refresh = () => void queryClient.invalidateQueries(trpc.admin.usersPage.pathFilter());
  const setRole = useMutation(trpc.admin.setRole.mutationOptions({ onSettled: refresh }));
  const disable = useMutation(trpc.admin.disableUser.mutationOptions({ onSettled: refresh }));
  const enable = useMutation(trpc.admin.enableUser.mutationOptions({ onSettled: refresh }));
  const remove = useMutation(trpc.admin.deleteUser.mutationOptions({ onSettled: refresh }));
  const offboard = useMutation(trpc.admin.offboardUser.mutationOptions({ onSettled: refresh }));
  const [renaming, setRenaming] = useState<string | null>(null);
  const rename = useMutation(trpc.admin.renameUser.mutationOptions({ onSuccess: () => setRenaming(null), onSettled: refresh }));
  const [confirming, setConfirming] = useState<TConfirming>(null);
  const isAdmin = me?.role === "admin";
  const error = setRole.error ?? disable.error ?? enable.error ?? remove.error ?? offboard.error ?? rename.error;
  const rows = loadedRows(users);
  return (
    <section aria-label={t("label")}>
      {error ? (
        <p role="alert" className="error-box" data-testid="users-error">
          {errorText(error, "change")}
        </p>
      ) : null}
      <ListStates query={users} isEmpty={rows.length === 0} empty={t("none")} skeleton={{ rows: 4, columns: 6 }}>
        <DataTable
          testId="users-table"
          rows={rows}
          rowKey={(u) => u.id}
          rowProps={(u) => ({ "data-testid": "user-row", "data-user-id": u.id, "data-status": u.status })}
          columns={[
            {
              key: "name",
              header: t("name"),
              cell: (u) =>
                renaming === u.id ? (
                  <RenameForm user={u} busy={rename.isPending} onSave={(name) => rename.mutate({ userId: u.id, name })} onCancel={() => setRenaming(null)} />
                ) : (
                  <>
                    <span data-testid="user-name">{u.name}</span> {u.id === me?.userId ? <span className="muted small">{t("you")}</span> : null}
                    {isAdmin && u.status !== "deleted" ? (
                      <>
                        {" "}
                        <button
                          type="button"
                          className="btn btn-quiet btn-small"
                          data-testid="rename-user"
                          aria-label={t("renameLabel", { name: u.name })}
                          onClick={() => {
                            rename.reset();
                            setRenaming(u.id);
                          }}
                        >
                          {t("rename")}
                        </button>
                      </>
                    ) : null}
                  </>
                ),
            },
            { key: "email", header: t("email"), className: "muted", cell: (u) => u.email },
            {
              key: "teams",
              header: t("teams"),
              className: "muted",
              cell: (u) => <span data-testid="user-teams">{u.groups.length > 0 ? u.groups.join(", ") : "—"}</span>,
            },
            {
              key: "role",
              header: t("role"),
              cell: (u) =>
                isAdmin && u.id !== me?.userId && u.status !== "deleted" ? (
                  <select
                    className="input input-compact"
                    aria-label={t("roleOf", { name: u.name })}
                    value={u.role}
                    disabled={setRole.isPending}
                    onChange={(e) => setRole.mutate({ userId: u.id, role: e.target.value as TRole })}
                  >
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {vocab.role(r)}
                      </option>
                    ))}
                  </select>
                ) : (
                  <span className="role" title={isRole(u.role) ? vocab.roleText(u.role) : undefined}>
                    {isRole(u.role) ? vocab.role(u.role) : u.role}
                  </span>
                ),
            },
            {
              key: "status",
              header: col("status"),
              cell: (u) => (
                <span className={`badge ${USER_STATUS_TONE[u.status as TUserStatus] ?? "tone-muted"}`} data-testid="user-status">
                  {isUserStatus(u.status) ? vocab.userStatus(u.status) : u.status}
                </span>
              ),
            },
            { key: "keys", header: t("activeKeys"), kind: "num", cell: (u) => u.activeKeys },
            { key: "since", header: t("since"), kind: "nowrap", cell: (u) => <TimeAgo iso={u.createdAt} /> },
            isAdmin && {
              key: "actions",
              header: <span className="visually-hidden">{t("actions")}</span>,
              kind: "actions",
              cell: (u) =>
                u.id === me?.userId || u.status === "deleted" ? null : (
                  <span className="actions">
                    {u.status === "disabled" ? (
                      <button type="button" className="btn btn-quiet btn-small" disabled={enable.isPending} onClick={() => enable.mutate({ userId: u.id })} aria-label={t("enableLabel", { name: u.name })}>
                        {t("enable")}
                      </button>
                    ) : (
                      <TwoStepAction
                        asking={confirming?.userId === u.id && confirming.action === "disable"}
                        onAsk={() => setConfirming({ userId: u.id, action: "disable" })}
                        onCancel={() => setConfirming(null)}
                        onConfirm={() => disable.mutate({ userId: u.id }, { onSettled: () => setConfirming(null) })}
                        label={t("disable")}
                        confirmLabel={t("disableConfirm")}
                        askClassName="btn btn-outline-bad btn-small"
                        busy={disable.isPending}
                        ariaLabel={t("disableLabel", { name: u.name })}
                      />
                    )}
                    <TwoStepAction
                      asking={confirming?.userId === u.id && confirming.action === "offboard"}
                      onAsk={() => setConfirming({ userId: u.id, action: "offboard" })}
                      onCancel={() => setConfirming(null)}
                      onConfirm={() => offboard.mutate({ userId: u.id }, { onSettled: () => setConfirming(null) })}
                      label={t("offboard")}
                      confirmLabel={t("offboardConfirm")}
                      askClassName="btn btn-outline-bad btn-small"
                      busy={offboard.isPending}
                      ariaLabel={t("offboardLabel", { name: u.name })}
                    />
                    <TwoStepAction
                      asking={confirming?.userId === u.id && confirming.action === "delete"}
                      onAsk={() => setConfirming({ userId: u.id, action: "delete" })}
                      onCancel={() => setConfirming(null)}
                      onConfirm={() => remove.mutate({ userId: u.id }, { onSettled: () => setConfirming(null) })}
                      label={t("delete")}
                      confirmLabel={t("deleteConfirm")}
                      askClassName="btn btn-outline-bad btn-small"
                      busy={remove.isPending}
                      ariaLabel={t("deleteLabel", { name: u.name })}
                    />
                  </span>
                ),
            },
          ]}
        />
        <LoadOlder pages={users} shown={rows.length} testId="load-older-users" />
      </ListStates>
      <dl className="role-legend small">
        {ROLES.map((r) => (
          <div key={r}>
            <dt>{vocab.role(r)}</dt>
            <dd className="muted">{vocab.roleText(r)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
