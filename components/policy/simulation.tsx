"use client";

import { useMutation } from "@tanstack/react-query";
import { useLocale, useTranslations } from "next-intl";
import { type ChangeEvent, type FormEvent, type RefObject, useEffect, useId, useRef, useState } from "react";
import { OutcomeBadge } from "../analytics/outcomes";
import { isOutcome } from "../analytics/query-state";
import { CompactArgs } from "../analytics/request-lists";
import type { TSimulationView } from "../api-types";
import { DataTable } from "../list-kit/data-table";
import { EmptyState } from "../list-kit/list-states";
import { useFormatTimestamp } from "../time-labels";
import { useTRPC } from "../trpc-provider";
import { DEFAULT_WINDOW, parseCandidate, windowDays } from "./policy-state";
import { serverSentenceOf, usePolicyErrorSentence } from "./server-sentence";

type TRow = TSimulationView["rows"][number];
type TCounts = TSimulationView["totals"];

/** The figures of a row and of the totals, in the order shown. */
const FIGURES = ["requests", "nowWithoutPerson", "nowWithoutPersonDenied", "nowWithoutPersonEdited", "nowAsksPerson", "unavailable", "deciderRefused", "quorumRaised", "unchanged"] as const satisfies ReadonlyArray<keyof TCounts>;
type TFigure = (typeof FIGURES)[number];
/** The figures a person should worry about when not zero (a request a person refused or corrected would go through). */
const DANGER: ReadonlySet<TFigure> = new Set(["nowWithoutPersonDenied", "nowWithoutPersonEdited"]);
const dangerOf = (c: Pick<TCounts, "nowWithoutPersonDenied" | "nowWithoutPersonEdited">) => c.nowWithoutPersonDenied + c.nowWithoutPersonEdited;

/**
 * Policy simulation (`policy.simulate`): a candidate agents file (chosen as a file or pasted) replayed
 * over the recorded requests of a window. The browser refuses text that is not a JSON object before
 * sending anything; the server's refusal of an invalid file is shown as it wrote it.
 */
export function Simulation() {
  const t = useTranslations("policy");
  const trpc = useTRPC();
  const sentence = usePolicyErrorSentence();
  const [text, setText] = useState("");
  const [daysText, setDaysText] = useState<string>(DEFAULT_WINDOW);
  const [refusal, setRefusal] = useState<{ field: "file" | "days"; text: string } | null>(null);
  const [loaded, setLoaded] = useState<string | null>(null);
  const simulate = useMutation(trpc.policy.simulate.mutationOptions());
  const textRef = useRef<HTMLTextAreaElement>(null);
  const daysRef = useRef<HTMLInputElement>(null);
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const id = useId();

  const onFile = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    if (!file) return;
    setRefusal(null);
    try {
      setText(await file.text());
      setLoaded(file.name);
    } catch (error) {
      setLoaded(null);
      setRefusal({ field: "file", text: t("readFailed", { name: file.name, detail: error instanceof Error ? error.message : String(error) }) });
    }
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    simulate.reset();
    const candidate = parseCandidate(text);
    if (!candidate.ok) {
      setRefusal({ field: "file", text: candidate.problem === "json" ? t("badJson", { detail: candidate.detail }) : t(candidate.problem === "empty" ? "noCandidate" : "notObject") });
      textRef.current?.focus();
      return;
    }
    const days = windowDays(daysText);
    if (days === null) {
      setRefusal({ field: "days", text: t("badDays") });
      daysRef.current?.focus();
      return;
    }
    setRefusal(null);
    simulate.mutate({ file: candidate.file, days });
  };

  // Each new result takes the focus once it is on the page (after React committed it, whatever the timing).
  useEffect(() => {
    if (simulate.data) resultHeading.current?.focus();
  }, [simulate.data]);

  const refusedByServer = simulate.error ? serverSentenceOf(simulate.error) : null;
  return (
    <section className="section" aria-labelledby="policy-simulation-title" data-testid="policy-simulation">
      <h2 id="policy-simulation-title">{t("simulation")}</h2>
      <p className="muted small">{t("simulationHint")}</p>
      <p className="notice small" data-testid="simulation-note">
        {t("simulationNote")}
      </p>
      <form className="card policy-form" onSubmit={onSubmit} noValidate data-testid="simulation-form">
        <div className="policy-field">
          <label htmlFor={`${id}-file`}>{t("candidateFile")}</label>
          <input id={`${id}-file`} type="file" accept=".json,application/json" className="input" onChange={onFile} data-testid="candidate-file" />
          {loaded ? (
            <p className="hint" data-testid="candidate-loaded">
              {t("fileLoaded", { name: loaded })}
            </p>
          ) : null}
        </div>
        <div className="policy-field">
          <label htmlFor={`${id}-text`}>{t("candidateText")}</label>
          <textarea
            id={`${id}-text`}
            ref={textRef}
            className="input policy-candidate"
            rows={10}
            spellCheck={false}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setLoaded(null);
            }}
            aria-invalid={refusal?.field === "file" ? true : undefined}
            aria-describedby={refusal?.field === "file" ? `${id}-refusal` : undefined}
            placeholder='{ "agents": [ … ] }'
            data-testid="candidate-text"
          />
        </div>
        <div className="policy-field policy-days">
          <label htmlFor={`${id}-days`}>{t("days")}</label>
          <input
            id={`${id}-days`}
            ref={daysRef}
            type="number"
            inputMode="numeric"
            min={1}
            max={365}
            step={1}
            className="input input-compact"
            value={daysText}
            onChange={(e) => setDaysText(e.target.value)}
            aria-invalid={refusal?.field === "days" ? true : undefined}
            aria-describedby={refusal?.field === "days" ? `${id}-refusal` : `${id}-days-hint`}
            data-testid="simulation-days"
          />
          <p className="hint" id={`${id}-days-hint`}>
            {t("daysHint")}
          </p>
        </div>
        {refusal ? (
          <p role="alert" className="error-box" id={`${id}-refusal`} data-testid="simulation-refusal">
            {refusal.text}
          </p>
        ) : null}
        {simulate.error ? (
          <p role="alert" className="error-box" data-testid="simulation-error">
            {refusedByServer ? (
              <>
                <strong>{t("refused")}</strong> <span data-testid="server-sentence">{refusedByServer}</span>
              </>
            ) : (
              sentence(simulate.error, "load")
            )}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" className="btn btn-primary" disabled={simulate.isPending} aria-busy={simulate.isPending} data-testid="simulate">
            {simulate.isPending ? t("simulating") : t("simulate")}
          </button>
        </div>
      </form>
      {simulate.data ? <SimulationResult result={simulate.data} headingRef={resultHeading} /> : null}
    </section>
  );
}

/** The totals as figures, a row per agent and action (dangerous first, in red), then the dangerous requests. */
function SimulationResult({ result, headingRef }: { result: TSimulationView; headingRef: RefObject<HTMLHeadingElement | null> }) {
  const t = useTranslations("policy");
  const locale = useLocale();
  const stamp = useFormatTimestamp();
  const fmt = (n: number) => n.toLocaleString(locale);
  const totals = result.totals;
  // The server sends the dangerous rows first; kept so whatever its order (a stable sort).
  const rows = [...result.rows].sort((a, b) => Number(dangerOf(b) > 0) - Number(dangerOf(a) > 0));
  return (
    <section className="section policy-result" aria-labelledby="policy-result-title" data-testid="simulation-result">
      <h3 id="policy-result-title" ref={headingRef} tabIndex={-1}>
        {t("resultTitle")}
      </h3>
      <p className="muted small" data-testid="simulation-period">
        {t("resultPeriod", { n: result.requests, days: result.days, from: stamp(result.from), to: stamp(result.to) })}
      </p>
      <ul className="policy-figures" data-testid="simulation-totals">
        {FIGURES.map((f) => (
          <li key={f} className={`card stat policy-figure${DANGER.has(f) && totals[f] > 0 ? " policy-danger" : ""}`} data-testid={`sim-total-${f}`}>
            <span className="stat-value">{fmt(totals[f])}</span>
            <span className="muted small">{t(`fig.${f}`)}</span>
          </li>
        ))}
      </ul>
      {dangerOf(totals) > 0 ? (
        <p className="error-box" data-testid="simulation-danger">
          {t("danger", { denied: totals.nowWithoutPersonDenied, edited: totals.nowWithoutPersonEdited })}
        </p>
      ) : result.requests > 0 ? (
        <p className="notice notice-sent" data-testid="simulation-safe">
          {t("safe")}
        </p>
      ) : null}
      {rows.length === 0 ? (
        <EmptyState testId="simulation-empty">{t("noRows", { n: result.days })}</EmptyState>
      ) : (
        <DataTable<TRow>
          testId="simulation-table"
          caption={t("tableCaption")}
          rows={rows}
          rowKey={(r) => `${r.agent}\u0000${r.action}`}
          rowProps={(r) => ({
            "data-testid": "sim-row",
            "data-agent": r.agent,
            "data-action": r.action,
            "data-dangerous": dangerOf(r) > 0 ? "true" : "false",
            className: dangerOf(r) > 0 ? "policy-danger" : undefined,
          })}
          columns={[
            { key: "agent", header: t("colAgent"), kind: "nowrap", cell: (r) => r.agent },
            { key: "action", header: t("colAction"), kind: "nowrap", cell: (r) => <code>{r.action}</code> },
            { key: "requests", header: t("fig.requests"), kind: "num", cell: (r) => fmt(r.requests) },
            {
              key: "without",
              header: t("fig.nowWithoutPerson"),
              cell: (r) => (
                <>
                  <span data-testid="sim-without">{fmt(r.nowWithoutPerson)}</span>
                  {dangerOf(r) > 0 ? (
                    <strong className="policy-danger-note" data-testid="sim-danger">
                      {t("danger", { denied: r.nowWithoutPersonDenied, edited: r.nowWithoutPersonEdited })}
                    </strong>
                  ) : null}
                </>
              ),
            },
            { key: "asks", header: t("fig.nowAsksPerson"), kind: "num", cell: (r) => <span data-testid="sim-asks">{fmt(r.nowAsksPerson)}</span> },
            { key: "unavailable", header: t("fig.unavailable"), kind: "num", cell: (r) => <span data-testid="sim-unavailable">{fmt(r.unavailable)}</span> },
            { key: "refused", header: t("fig.deciderRefused"), kind: "num", cell: (r) => <span data-testid="sim-refused">{fmt(r.deciderRefused)}</span> },
            { key: "quorum", header: t("fig.quorumRaised"), kind: "num", cell: (r) => <span data-testid="sim-quorum">{fmt(r.quorumRaised)}</span> },
            { key: "unchanged", header: t("fig.unchanged"), kind: "num", cell: (r) => <span data-testid="sim-unchanged">{fmt(r.unchanged)}</span> },
          ]}
        />
      )}
      <details className="policy-legend">
        <summary>{t("legend")}</summary>
        <dl className="facts">
          {FIGURES.map((f) => (
            <div key={f}>
              <dt>{t(`fig.${f}`)}</dt>
              <dd>{t(`meaning.${f}`)}</dd>
            </div>
          ))}
        </dl>
      </details>
      {result.dangerous.length > 0 ? (
        <section className="section" aria-labelledby="policy-dangerous-title" data-testid="simulation-dangerous">
          <h3 id="policy-dangerous-title">{t("dangerousTitle")}</h3>
          <p className="muted small">{t("dangerousHint", { n: result.dangerous.length })}</p>
          <DataTable
            testId="dangerous-table"
            rows={result.dangerous}
            rowKey={(r) => r.id}
            rowProps={(r) => ({ "data-testid": "sim-dangerous-row", "data-request-id": r.id, "data-outcome": r.outcome })}
            columns={[
              { key: "asked", header: t("colAsked"), kind: "nowrap", cell: (r) => stamp(r.createdAt) },
              {
                key: "request",
                header: t("colRequest"),
                cell: (r) => (
                  <>
                    <code>{r.action}</code> <span className="muted small">{r.agent}</span>
                  </>
                ),
              },
              { key: "then", header: t("colThen"), kind: "nowrap", cell: (r) => (isOutcome(r.outcome) ? <OutcomeBadge outcome={r.outcome} /> : r.outcome) },
              { key: "args", header: t("colArguments"), className: "analytics-args-cell", cell: (r) => <CompactArgs value={r.arguments} /> },
              { key: "id", header: t("colId"), cell: (r) => <code className="small">{r.id}</code> },
            ]}
          />
        </section>
      ) : null}
    </section>
  );
}
