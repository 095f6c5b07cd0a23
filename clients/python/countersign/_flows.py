"""The client's operations written once, without I/O: each is a generator that yields the HTTP
calls it needs (`Call`) and receives their parsed JSON answers, and returns its result. The
synchronous client sends the calls with urllib; the asyncio one awaits the same calls in a worker
thread, so both behave exactly alike."""

from __future__ import annotations

import inspect
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generator, List, Mapping, Optional, Tuple, TypeVar, Union

from .errors import ApprovalDenied, ApprovalEdited, CountersignError
from .types import Approval, ApprovalListItem, QuestionResult

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 900.0
"""How long `wait_approval`, `obtain_approval` and `require_approval` wait for a decision (15 minutes)."""


@dataclass(frozen=True)
class Call:
    """One HTTP call: `wait_s` is how long the server may hold it (a long poll) beyond the client's timeout."""

    method: str
    path: str
    body: Optional[Dict[str, Any]] = None
    wait_s: float = 0.0


Flow = Generator[Call, Any, T]

OnRequest = Callable[[Approval], Any]
"""Called with the approval as the create answered it (e.g. to log its id)."""

Computed = Union[str, Callable[[Dict[str, Any]], str], None]
"""A string, or a function of the call's arguments that makes one (for `require_approval`)."""


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _body(required: Mapping[str, Any], optional: Mapping[str, Any]) -> Dict[str, Any]:
    body = dict(required)
    body.update({key: value for key, value in optional.items() if value is not None})
    return body


def request_approval(action: str, arguments: Mapping[str, Any], *, session_id: Optional[str] = None, agent: Optional[str] = None, message: Optional[str] = None, risk: Optional[str] = None, expires_in_ms: Optional[int] = None, idempotency_key: Optional[str] = None) -> Flow[Approval]:
    body = _body({"action": action, "arguments": dict(arguments)}, {"sessionId": session_id, "agent": agent, "message": message, "risk": risk, "expiresInMs": expires_in_ms, "idempotencyKey": idempotency_key})
    return (yield Call("POST", "/v1/approvals", body))


def get_approval(approval_id: str, wait_ms: int = 0) -> Flow[Approval]:
    query = "?wait=%d" % int(wait_ms) if wait_ms else ""
    return (yield Call("GET", "/v1/approvals/%s%s" % (_quote(approval_id), query), wait_s=wait_ms / 1000.0))


def wait_approval(approval_id: str, timeout_s: float = DEFAULT_TIMEOUT_S, poll_s: float = 60.0) -> Flow[Approval]:
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        approval = yield from get_approval(approval_id, wait_ms=int(max(0.0, min(left, poll_s)) * 1000))
        if approval["status"] != "pending" or deadline - time.monotonic() <= 0:
            return approval


def consume(approval_id: str, binding_hash: str) -> Flow[Approval]:
    return (yield Call("POST", "/v1/approvals/%s/consume" % _quote(approval_id), {"bindingHash": binding_hash}))


def obtain_approval(action: str, arguments: Mapping[str, Any], *, accept_edits: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S, on_request: Optional[OnRequest] = None, **request: Any) -> Flow[Approval]:
    created = yield from request_approval(action, arguments, **request)
    if on_request is not None:
        on_request(created)
    approval = created if created["status"] != "pending" else (yield from wait_approval(created["id"], timeout_s=timeout_s))
    if approval["status"] != "approved":
        raise ApprovalDenied(approval)
    if approval["edited"] and not accept_edits:
        raise ApprovalEdited(approval)
    return (yield from consume(approval["id"], approval["bindingHash"]))


def decide(approval_id: str, decision: str, message: Optional[str] = None, arguments: Optional[Mapping[str, Any]] = None, grant: Union[str, Dict[str, int], None] = None) -> Flow[Dict[str, Any]]:
    body = _body({"decision": decision}, {"message": message, "arguments": None if arguments is None else dict(arguments), "grant": grant})
    return (yield Call("POST", "/v1/approvals/%s" % _quote(approval_id), body))


def list_approvals(status: str = "pending") -> Flow[List[ApprovalListItem]]:
    answer = yield Call("GET", "/v1/approvals?status=" + _quote(status))
    return answer["approvals"]


def gateway(method: str, params: Mapping[str, Any], wait_s: float = 0.0) -> Flow[Any]:
    answer = yield Call("POST", "/v1/gateway/" + method, dict(params), wait_s=wait_s)
    return answer["payload"]


def ask(question: str, options: Optional[List[str]] = None, header: str = "Question", multi_select: bool = False, timeout_ms: int = 600000, session_id: Optional[str] = None) -> Flow[Union[str, List[str]]]:
    q: Dict[str, Any] = {"questionId": "answer", "header": header[:12], "question": question, "options": [{"label": str(o)} for o in (options or [])]}
    if multi_select:
        q["multiSelect"] = True
    created = yield from gateway("question.request", _body({"questions": [q], "timeoutMs": int(timeout_ms)}, {"sessionId": session_id}))
    deadline = time.monotonic() + timeout_ms / 1000.0 + 5
    while True:
        left = max(1.0, min(60.0, deadline - time.monotonic()))
        result: QuestionResult = yield from gateway("question.waitAnswer", {"id": created["id"], "timeoutMs": int(left * 1000)}, wait_s=left)
        if result["status"] == "answered":
            values = result.get("answers", {}).get("answer", [])
            return values if multi_select else (values[0] if values else "")
        if result["status"] != "pending":
            raise CountersignError(409, result["status"], "The question was %s before anyone answered." % result["status"])
        if time.monotonic() >= deadline:
            raise CountersignError(504, "timeout", "Nobody answered in time.")


@dataclass(frozen=True)
class Requirement:
    """What `require_approval` asks for each call of the function it wraps."""

    action: str
    signature: inspect.Signature
    message: Computed
    idempotency_key: Computed
    accept_edits: bool
    timeout_s: float
    on_request: Optional[OnRequest]
    request: Dict[str, Any]

    def flow(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Flow[Approval]:
        """The call's arguments, bound by name, are the operation's arguments."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        message = self.message(arguments) if callable(self.message) else self.message
        key = self.idempotency_key(arguments) if callable(self.idempotency_key) else self.idempotency_key
        return obtain_approval(self.action, arguments, accept_edits=self.accept_edits, timeout_s=self.timeout_s, on_request=self.on_request, message=message, idempotency_key=key, **self.request)
