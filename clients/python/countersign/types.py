"""The `/v1` shapes the client reads, as typed dictionaries (the JSON the server answers)."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

__all__ = ["Approval", "ApprovalListItem", "ApprovalStatus", "Risk", "QuestionResult"]

ApprovalStatus = Literal["pending", "approved", "denied", "expired", "cancelled"]
Risk = Literal["low", "medium", "high"]


class _ApprovalKeys(TypedDict):
    id: str
    status: ApprovalStatus
    bindingHash: str
    expiresAtMs: int
    action: str
    arguments: Dict[str, Any]
    edited: bool
    risk: Risk
    sessionId: str
    responseId: str
    consumed: bool
    decidedBy: Optional[str]
    decidedVia: Optional[str]


class Approval(_ApprovalKeys, total=False):
    """An external approval as `GET /v1/approvals/{id}` (and the create, and consume) answer it.

    `arguments` are the ones to run (the approver's edit when `edited`; `originalArguments` then
    holds the requested ones) and `bindingHash` binds them: consume checks it. `message` is the
    approver's reply (a denial with a message) or the exec reviewer's rationale of a denial.
    """

    originalArguments: Dict[str, Any]
    message: str


class ApprovalListItem(TypedDict):
    """One approval of `GET /v1/approvals?status=` (hosted and external; more keys may follow)."""

    id: str
    responseId: str
    sessionId: str
    agent: str
    user: Optional[str]
    action: str
    toolName: str
    message: str
    arguments: Any
    risk: Risk
    bindingHash: str
    status: str
    expiresAt: str
    createdAt: str


class _QuestionResultKeys(TypedDict):
    status: Literal["pending", "answered", "cancelled", "expired"]


class QuestionResult(_QuestionResultKeys, total=False):
    """`question.waitAnswer`: `answered` with the answers, or still `pending`, `cancelled`, `expired`."""

    answers: Dict[str, List[str]]
    resolutionId: str
