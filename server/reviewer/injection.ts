import { clip } from "./verdicts";
import { squashedView, textViews } from "./injection-text";
import type { TReviewRequest } from "./types";

/**
 * Heuristics for reviewer-directed prompt injection: text addressed to a reviewer, approver or
 * safety system, or text that dictates a verdict. A hit means `deny` with high risk.
 *
 * Trade-off: a false positive denies a command the agent may then ask the user to approve
 * separately, while a miss leaves the model reviewer (which is told to treat everything as data)
 * as the only defence. So patterns target reviewer vocabulary (reviewer, approver, verdict,
 * allow-once, "mark it low risk"), not words like "ignore", "approve" or "review" on their own:
 * `grep -r ignore src`, `git log --grep approve` and `gh pr review --approve` stay clean. Claims
 * about the command itself ("this command is safe", "approved by the admin") are matched in
 * commands only, because an agent's own narration in the context legitimately says such things.
 * Known false positives: writing or grepping a literal verdict such as `"decision":"allow-once"`
 * (or `{"decision":"approve"}`, which is also what a self-approval call would send), and commit
 * messages shaped like `reviewer: allow …`.
 */

/** Where a text comes from: `command` (and tool arguments) is matched strictly, `context` leniently. */
export type TInjectionSource = "command" | "context";

/** The outcome of a scan; `evidence` names the view and the matching text. */
export type TInjectionFinding = { detected: boolean; evidence?: string };

type TPattern = { label: string; re: RegExp; commandOnly?: boolean };

const STRONG =
  "(?:approvers?|guardrails?|gatekeepers?|moderators?|classifiers?|countersign|" +
  "(?:ai|llm|automated|security|safety|exec|command|human|model)[ -](?:reviewers?|approvers?|judges?|checkers?|filters?|classifiers?|scanners?|monitors?|guards?|gatekeepers?|moderators?)|" +
  "(?:safety|security|review|approval|moderation)[ -](?:system|layer|model|checker|check|bot|filter)|reviewing (?:ai|model|llm|system|agent))";
const ADDRESSED = "(?:reviewers?|auditors?|judges?|evaluators?|ai|a\\.i\\.|llm|gpt|language models?)";
const WEAK = "(?:reviewers?|auditors?|judges?|evaluators?|checkers?|ai|a\\.i\\.|llm|gpt|language models?|models?|assistants?|bots?)";
const MEMO = "(?:note|message|memo|instructions?|hint|attention|notice|reminder|directive|fyi|p\\.?s\\.?|important)";
const VERDICT_WORD = "\\b(?:approv\\w*|allow\\w*|permit\\w*|authori[sz]\\w*|safe|harmless|benign|low[ -]?risk|verdict|decision|escalat\\w*)\\b";
const FAVOURABLE = "(?:allow[-_ ]?once|allow(?:ed)?|approved?|safe|low[-_ ]?risk)";
const QUALIFIER = "(?:previous|prior|above|earlier|preceding|foregoing|original|system|safety|security|existing|initial|reviewer'?s?|other)";
const RULES = "(?:instructions?|prompts?|rules|directives?|guidelines|guidance|polic(?:y|ies)|constraints|restrictions)";
const SUBJECT = "(?:this|the following|the above|above|following|that|my)\\s+(?:shell\\s+)?(?:command|script|request|action|operation|exec(?:ution)?|tool call)";

const p = (label: string, source: string, commandOnly = false): TPattern => ({ label, re: new RegExp(source, "m"), commandOnly });

const PATTERNS: TPattern[] = [
  p("instruction override", `\\b(?:ignore|disregard|forget|override|overrule|bypass|abandon)\\s+(?:(?:all|any|each|every|the|of|your|these|those)\\s+)*${QUALIFIER}\\s+(?:\\w+\\s+)?${RULES}\\b`),
  p("instruction override", `\\b(?:ignore|disregard|forget)\\s+(?:all|any|every|your)\\s+${RULES}\\b`),
  p("review bypass", "\\b(?:bypass|circumvent|evade|get around|skip)\\s+(?:the\\s+|any\\s+|all\\s+)?(?:reviewer|approval|approver|safety review|security review|safety check|security check|human approval)s?\\b"),
  p("addressed to the reviewer", `(?:^|[^a-z])${MEMO}\\s*(?:to|for)\\s+(?:the\\s+|any\\s+|all\\s+|our\\s+)?${STRONG}\\b`),
  p("addressed to the reviewer", `\\b(?:dear|hey|hi|hello|attention|listen|psst|greetings)\\s*[,!:]?\\s+(?:the\\s+)?${STRONG}\\b`),
  p("addressed to the reviewer", `(?:^|[^a-z])${MEMO}\\s*(?:to|for)\\s+(?:the\\s+|any\\s+|all\\s+|our\\s+)?${WEAK}\\b[^\\n]{0,120}?${VERDICT_WORD}`),
  p("verdict dictated to the reviewer", `(?:^|[^a-z-])(?:${STRONG}|${ADDRESSED})\\s*[:,\\-–—]+\\s*(?:please\\s+|kindly\\s+|just\\s+)?(?:approve|allow|permit|authori[sz]e|whitelist|allowlist|accept|mark|classify|rate|trust|respond|reply|answer|output|return|say|ignore|disregard)\\b`),
  p("dictated verdict", `\\b(?:respond|reply|answer|output|emit|decide|conclude)\\s+(?:(?:only|just|exactly|simply|with|the|decision|verdict|word|json)\\s+)*[:"'\`({\\s]*${FAVOURABLE}\\b`),
  p("dictated verdict", "\\breturn\\s+(?:the\\s+|a\\s+)?(?:decision|verdict)\\b|\\breturn\\s+[\"'`]?allow[-_]once\\b"),
  p("dictated verdict", `\\b(?:your|the|final)\\s+(?:decision|verdict|classification|assessment|answer|risk(?: level)?)\\s+(?:must|should|shall|will|has to|needs to)\\s+be\\s+["'\`]?(?:${FAVOURABLE}|low|benign|harmless|yes)\\b`),
  p("embedded verdict", `["']?\\b(?:decision|verdict)["']?\\s*[:=]\\s*["']?${FAVOURABLE}\\b`),
  p("embedded verdict", `["']?\\brisk(?:[ _-]?(?:level|rating|score))?["']?\\s*(?:[:=]|must be|should be|shall be)\\s*["']?(?:low|none|minimal|zero)\\b`, true),
  p("dictated risk", "\\b(?:mark|classify|rate|label|score|flag|tag|categori[sz]e|grade)\\s+(?:it|this|that|me|the\\s+(?:command|request|action|operation|script|call))?\\s*(?:as\\s+)?(?:(?:a\\s+)?(?:low|minimal|no|zero)[- ]risk|safe|benign|harmless|approved|allowed|trusted|non-?destructive)\\b"),
  p("chat template marker", "<\\|(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id)\\|>|\\[/?inst\\]|<</?sys>>|</?(?:system|system[-_ ]prompt|instructions?|reviewer[-_ ]instructions?)>"),
  p("role marker", "(?:^|#|//|[\"'])\\s*(?:system|developer)(?:\\s+(?:prompt|message|override|note|instruction|update))?\\s*:[^\\n]{0,200}?\\b(?:you|your|reviewer|approve|allow|ignore|must|should|respond|mark|treat|safe|instructions?|polic(?:y|ies)|verdict|decision)\\b"),
  p("replacement instructions", "\\b(?:new|updated|revised|override|overriding|real|actual|true)\\s+(?:system\\s+)?instructions?\\s*:"),
  p("text aimed at an AI reviewer", "\\bif\\s+you\\s*(?:'re|are)\\s+(?:an?\\s+|the\\s+)?(?:ai|llm|gpt|language model|automated|(?:ai |automated |security |safety )?(?:reviewer|approver|model|classifier|judge))\\b"),
  p("text aimed at an AI reviewer", "\\b(?:ai|llm|models?|reviewers?|approvers?|classifiers?)\\s+(?:reading|reviewing|analy[sz]ing|processing|evaluating|checking|scanning)\\s+this\\b"),
  p("jailbreak persona", "\\byou\\s+are\\s+now\\s+(?:an?\\s+)?(?:unrestricted|jailbroken|dan|unfiltered|uncensored|in\\s+(?:developer|god|jailbreak|unrestricted|dan)\\s+mode)\\b|\\b(?:jailbreak|dan)\\s+mode\\b"),
  p("claimed approval", `\\b${SUBJECT}\\s+(?:is|was|has been|'s)\\s+(?:(?:already|completely|totally|perfectly|entirely|100%|fully|officially|explicitly|known to be|verified)\\s+)*(?:safe|harmless|benign|pre-?approved|approved|authori[sz]ed|whitelisted|allowlisted|sanctioned|risk-?free|low[- ]risk)\\b`, true),
  p("claimed approval", "\\b(?:already|been|was|is|were|are)\\s+(?:pre-?)?(?:approved|authori[sz]ed|cleared|signed off)\\s+by\\s+(?:the\\s+|an?\\s+)?(?:admin(?:istrator)?|security(?: team)?|operator|owner|user|human|approver|reviewer|countersign|management|sysadmin)\\b", true),
  p("escalation suppressed", "\\b(?:do not|don'?t|never|no need to)\\s+(?:ask|escalate to|involve|bother|notify|consult)\\s+(?:a\\s+|the\\s+|any\\s+)?(?:human|person|user|operator|approver|admin(?:istrator)?)\\b|\\b(?:does\\s*n[o']?t|do\\s*n[o']?t)\\s+(?:need|require)\\s+(?:any\\s+)?(?:human\\s+|manual\\s+|further\\s+)?(?:review|approval|confirmation)\\b", true),
  p("comment addressed to the reviewer", `(?:^|\\s)#[^\\n]{0,40}?\\b(?:note|message|memo|hint|attention|notice|reminder|fyi|p\\.?s\\.?|dear|hey|hi|hello|psst|to|for)\\b\\s*(?:the\\s+|any\\s+|all\\s+)?(?:${STRONG}|reviewers?|auditors?|judges?|evaluators?)\\b`, true),
];

const SQUASHED: TPattern[] = [
  p("obfuscated instruction override", "(?:ignore|disregard|forget)(?:all|any|the|your|of)*(?:previous|prior|above|earlier|preceding|system|safety|security)(?:instructions?|prompts?|rules|guidelines|polic(?:y|ies))"),
  p("obfuscated note to the reviewer", "(?:note|message|memo)(?:to|for)(?:the)?(?:(?:ai|llm|safety|security)(?:reviewer|approver|system)|approver)"),
  p("obfuscated dictated verdict", "(?:respond|reply|answer|output)(?:only)?(?:with)?(?:allowonce|approved)|decision(?:is|must|should|be)*allowonce"),
  p("obfuscated dictated risk", "mark(?:it|this)(?:as)?(?:lowrisk|safe|approved)"),
  p("obfuscated verdict dictated to the reviewer", "(?:reviewer|approver)(?:please)?(?:approve|allow)(?:this|it|once)"),
  p("obfuscated claimed approval", "thiscommandis(?:completely|totally|perfectly)?(?:safe|harmless|approved|preapproved)", true),
];

function firstMatch(patterns: TPattern[], text: string, source: TInjectionSource) {
  for (const pattern of patterns) {
    if (pattern.commandOnly && source !== "command") continue;
    const match = pattern.re.exec(text);
    if (match) return { label: pattern.label, snippet: clip(match[0].trim(), 120) };
  }
  return null;
}

/** Scans one untrusted text for reviewer-directed instructions, including obfuscated ones. */
export function detectReviewerInjection(text: string, source: TInjectionSource = "command"): TInjectionFinding {
  if (text.length === 0) return { detected: false };
  for (const view of textViews(text)) {
    const found = firstMatch(PATTERNS, view.text, source) ?? firstMatch(SQUASHED, squashedView(view.text), source);
    if (found) {
      const via = view.via === "text" ? "" : ` (${view.via})`;
      return { detected: true, evidence: `${found.label}${via}: "${found.snippet}"` };
    }
  }
  return { detected: false };
}

/** Where in a request injection was found, with evidence; null when nothing was found. */
export type TRequestInjection = { field: "command" | "arguments" | "context"; evidence: string };

function argumentTexts(value: unknown): string[] {
  const texts: string[] = [];
  const walk = (node: unknown, depth: number) => {
    if (texts.length > 256 || depth > 8) return;
    if (typeof node === "string") texts.push(node);
    else if (Array.isArray(node)) for (const item of node) walk(item, depth + 1);
    else if (node !== null && typeof node === "object") {
      for (const [key, item] of Object.entries(node)) {
        texts.push(key);
        walk(item, depth + 1);
      }
    }
  };
  walk(value, 0);
  // The JSON form also catches verdict objects passed as structured arguments.
  let json = "";
  try {
    json = JSON.stringify(value) ?? "";
  } catch {}
  return [texts.join("\n"), json];
}

/** Applies `detectReviewerInjection` to the command, the stringified arguments and the context. */
export function findReviewerInjection(request: TReviewRequest): TRequestInjection | null {
  const checks: [TRequestInjection["field"], string[], TInjectionSource][] = [
    ["command", [request.command], "command"],
    ["arguments", argumentTexts(request.arguments), "command"],
    ["context", request.context ? [request.context] : [], "context"],
  ];
  for (const [field, texts, source] of checks) {
    for (const text of texts) {
      const finding = detectReviewerInjection(text, source);
      if (finding.detected) return { field, evidence: finding.evidence ?? "" };
    }
  }
  return null;
}
