"use client";

import { useQuery } from "@tanstack/react-query";
import { useLocale, useTranslations } from "next-intl";
import { useMemo, useState } from "react";
import { Bar, BarChart, CartesianGrid, Cell, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { useMe } from "./app-shell";
import { SelectFilter } from "./filters";
import { ListSkeleton } from "./list-kit/list-states";
import { useTRPC } from "./trpc-provider";
import { PageHead } from "./list-kit/page-head";
import { personLabel } from "./person";
import { localDay, periodEndingTonight, viewerZone } from "./viewer-time";

const PALETTE = ["#3b4fd8", "#1f9d6b", "#d97706", "#c2410c", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f"];
const RANGES = ["7", "30", "90"];

/** Output tokens per agent, user and day (in the viewer's time zone) as charts and a table, from `responses.usage`. */
export function UsagePage() {
  const trpc = useTRPC();
  const t = useTranslations("usage");
  const locale = useLocale();
  const fmt = (n: number) => n.toLocaleString(locale);
  const me = useMe();
  const [days, setDays] = useState("30");
  const [agent, setAgent] = useState("");
  const [userId, setUserId] = useState("");
  const timeZone = useMemo(viewerZone, []);
  // The window ends at the viewer's next local midnight, so today is included whole; it is fixed per choice (stable query key).
  const range = useMemo(() => periodEndingTonight(Number(days)), [days]);
  const usage = useQuery(trpc.console.usage.queryOptions({ ...range, timeZone, ...(agent ? { agent } : {}), ...(userId ? { userId } : {}) }, { placeholderData: (prev) => prev }));
  const agents = useQuery(trpc.console.agents.queryOptions(undefined, { staleTime: 300_000 }));
  const people = useQuery(trpc.console.people.queryOptions(undefined, { enabled: me?.role !== "member", staleTime: 60_000 }));
  const rows = usage.data ?? [];

  const { byDay, agentNames, byUser, byAgent, total } = useMemo(() => {
    const agentNames = [...new Set(rows.map((r) => r.agent))].sort();
    const dayMap = new Map<string, Record<string, number | string>>();
    // Step by calendar day (not 24 h): a daylight-saving day is 23 or 25 hours long.
    for (const d = new Date(range.from); d.getTime() < new Date(range.to).getTime(); d.setDate(d.getDate() + 1)) {
      const day = localDay(d);
      dayMap.set(day, { day, ...Object.fromEntries(agentNames.map((a) => [a, 0])) });
    }
    const users = new Map<string, number>();
    const perAgent = new Map<string, number>();
    let total = 0;
    for (const r of rows) {
      const entry = dayMap.get(r.day) ?? { day: r.day };
      entry[r.agent] = Number(entry[r.agent] ?? 0) + r.outputTokens;
      dayMap.set(r.day, entry);
      users.set(r.user, (users.get(r.user) ?? 0) + r.outputTokens);
      perAgent.set(r.agent, (perAgent.get(r.agent) ?? 0) + r.outputTokens);
      total += r.outputTokens;
    }
    return {
      byDay: [...dayMap.values()].sort((a, b) => String(a.day).localeCompare(String(b.day))),
      agentNames,
      byUser: [...users.entries()].map(([user, outputTokens]) => ({ user, outputTokens })).sort((a, b) => b.outputTokens - a.outputTokens),
      byAgent: [...perAgent.entries()].map(([agent, outputTokens]) => ({ agent, outputTokens })).sort((a, b) => b.outputTokens - a.outputTokens),
      total,
    };
  }, [rows, range]);

  return (
    <>
      <PageHead title={t("title")} lede={t.rich("lead", { own: me?.role === "member" ? "yes" : "no", zone: () => <span data-testid="usage-zone">{timeZone}</span> })} />
      <div className="filter-bar">
        <SelectFilter label={t("range")} value={days} onChange={setDays} options={RANGES.map((n) => ({ value: n, label: t("last", { n }) }))} anyLabel={null} testId="usage-range" />
        <SelectFilter label={t("agent")} value={agent} onChange={setAgent} options={(agents.data ?? []).map((a) => ({ value: a.name, label: a.name }))} anyLabel={t("any")} testId="usage-agent" />
        {me?.role !== "member" ? (
          <SelectFilter label={t("user")} value={userId} onChange={setUserId} options={(people.data ?? []).map((p) => ({ value: p.id, label: personLabel(p) }))} anyLabel={t("any")} testId="usage-user" />
        ) : null}
      </div>
      {usage.error ? (
        <p role="alert" className="error-box">
          {t("loadFailed", { message: usage.error.message })}
        </p>
      ) : null}
      <div className="usage-totals">
        <div className="card stat">
          <span className="stat-value" data-testid="usage-total">
            {fmt(total)}
          </span>
          <span className="muted small">{t("outputTokens")}</span>
        </div>
        <div className="card stat">
          <span className="stat-value">{fmt(rows.reduce((n, r) => n + r.responses, 0))}</span>
          <span className="muted small">{t("responses")}</span>
        </div>
        <div className="card stat">
          <span className="stat-value">{byAgent.length}</span>
          <span className="muted small">{t("agents")}</span>
        </div>
        <div className="card stat">
          <span className="stat-value">{byUser.length}</span>
          <span className="muted small">{t("users")}</span>
        </div>
      </div>

      <section className="card chart-card" aria-labelledby="per-day-title" data-testid="chart-per-day">
        <h2 id="per-day-title">{t("perDay")}</h2>
        <div className="chart">
          <ResponsiveContainer width="100%" height={280}>
            <BarChart data={byDay} margin={{ top: 8, right: 8, bottom: 0, left: 8 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="var(--border)" />
              <XAxis dataKey="day" tick={{ fontSize: 12, fill: "var(--muted)" }} tickFormatter={(d: string) => d.slice(5)} minTickGap={12} />
              <YAxis tick={{ fontSize: 12, fill: "var(--muted)" }} tickFormatter={(n: number) => fmt(n)} width={64} />
              <Tooltip formatter={(v) => fmt(Number(v))} contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)" }} />
              {/* Legend text in the text colour (the swatch keeps the series colour): series colours are too dark on the dark theme's surface. */}
              <Legend formatter={(value) => <span className="chart-legend-text">{value}</span>} />
              {agentNames.map((a, i) => (
                <Bar key={a} dataKey={a} stackId="agents" fill={PALETTE[i % PALETTE.length]} isAnimationActive={false} />
              ))}
            </BarChart>
          </ResponsiveContainer>
        </div>
      </section>

      <div className="grid-2 usage-grid">
        <section className="card chart-card" aria-labelledby="per-user-title" data-testid="chart-per-user">
          <h2 id="per-user-title">{t("perUser")}</h2>
          <ResponsiveContainer width="100%" height={Math.max(120, byUser.length * 34 + 40)}>
            <BarChart data={byUser} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 8 }}>
              <CartesianGrid strokeDasharray="3 3" horizontal={false} stroke="var(--border)" />
              <XAxis type="number" tick={{ fontSize: 12, fill: "var(--muted)" }} tickFormatter={(n: number) => fmt(n)} />
              <YAxis type="category" dataKey="user" tick={{ fontSize: 12, fill: "var(--muted)" }} width={120} />
              <Tooltip formatter={(v) => fmt(Number(v))} contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)" }} />
              <Bar dataKey="outputTokens" name={t("seriesOutputTokens")} fill={PALETTE[1]} isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </section>
        <section className="card chart-card" aria-labelledby="per-agent-title" data-testid="chart-per-agent">
          <h2 id="per-agent-title">{t("perAgent")}</h2>
          <ResponsiveContainer width="100%" height={Math.max(120, byAgent.length * 34 + 40)}>
            <BarChart data={byAgent} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 8 }}>
              <XAxis type="number" hide />
              <YAxis type="category" dataKey="agent" tick={{ fontSize: 12, fill: "var(--muted)" }} width={120} />
              <Tooltip formatter={(v) => fmt(Number(v))} contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)" }} />
              <Bar dataKey="outputTokens" name={t("seriesOutputTokens")} isAnimationActive={false}>
                {byAgent.map((a) => (
                  <Cell key={a.agent} fill={PALETTE[Math.max(0, agentNames.indexOf(a.agent)) % PALETTE.length]} />
                ))}
              </Bar>
            </BarChart>
          </ResponsiveContainer>
        </section>
      </div>

      <section className="section" aria-labelledby="usage-table-title">
        <h2 id="usage-table-title">{t("table")}</h2>
        {usage.isPending ? (
          <ListSkeleton rows={4} columns={6} />
        ) : rows.length === 0 ? (
          <p className="empty">{t("none")}</p>
        ) : (
          <div className="table-wrap">
            <table className="table" data-testid="usage-table">
              <thead>
                <tr>
                  <th scope="col">{t("day", { zone: timeZone })}</th>
                  <th scope="col">{t("colAgent")}</th>
                  <th scope="col">{t("colUser")}</th>
                  <th scope="col" className="num">
                    {t("colResponses")}
                  </th>
                  <th scope="col" className="num">
                    {t("colInput")}
                  </th>
                  <th scope="col" className="num">
                    {t("colOutput")}
                  </th>
                </tr>
              </thead>
              <tbody>
                {[...rows].reverse().map((r) => (
                  <tr key={`${r.day}:${r.agent}:${r.userId}`} data-testid="usage-row">
                    <td className="nowrap">{r.day}</td>
                    <td>{r.agent}</td>
                    <td>{r.user}</td>
                    <td className="num">{fmt(r.responses)}</td>
                    <td className="num">{fmt(r.inputTokens)}</td>
                    <td className="num">{fmt(r.outputTokens)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row" colSpan={3}>
                    {t("total")}
                  </th>
                  <td className="num">{fmt(rows.reduce((n, r) => n + r.responses, 0))}</td>
                  <td className="num">{fmt(rows.reduce((n, r) => n + r.inputTokens, 0))}</td>
                  <td className="num">{fmt(total)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
