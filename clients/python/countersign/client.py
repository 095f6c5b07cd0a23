"""`Countersign` (synchronous) and `AsyncCountersign` (asyncio): the same operations (see `_flows`)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, TypeVar, Union

from . import _flows
from ._flows import DEFAULT_TIMEOUT_S, Computed, Flow, OnRequest, Requirement
from ._http import send
from .types import Approval, ApprovalListItem

__all__ = ["Countersign", "AsyncCountersign"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class _Client:
    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 90.0) -> None:
        """`base_url` defaults to `COUNTERSIGN_URL` (else http://localhost:3000), `api_key` to
        `COUNTERSIGN_API_KEY`; `timeout` bounds each request (seconds, beyond a long poll's wait)."""
        self.base_url = (base_url or os.environ.get("COUNTERSIGN_URL") or "http://localhost:3000").rstrip("/")
        key = api_key or os.environ.get("COUNTERSIGN_API_KEY")
        if not key:
            raise ValueError("An API key is needed: pass api_key or set COUNTERSIGN_API_KEY.")
        self.api_key: str = key
        self.timeout = timeout

    def _send(self, call: _flows.Call) -> Any:
        return send(self.base_url, self.api_key, self.timeout, call)

    @staticmethod
    def _requirement(fn: Callable[..., Any], action: str, options: Dict[str, Any]) -> Requirement:
        options = dict(options)
        request = {key: options.pop(key) for key in ("agent", "risk", "session_id", "expires_in_ms")}
        return Requirement(action=action, signature=inspect.signature(fn), request=request, **options)


class Countersign(_Client):
    """The synchronous client: each method blocks until its answer (long polls included)."""

    def _run(self, flow: Flow[T]) -> T:
        """Runs an operation, sending its calls one after the other (blocking)."""
        reply: Any = None
        while True:
            try:
                call = flow.send(reply)
            except StopIteration as done:
                return done.value
            reply = self._send(call)

    # -- approvals ------------------------------------------------------------------------
    def request_approval(self, action: str, arguments: Mapping[str, Any], *, session_id: Optional[str] = None, agent: Optional[str] = None, message: Optional[str] = None, risk: Optional[str] = None, expires_in_ms: Optional[int] = None, idempotency_key: Optional[str] = None) -> Approval:
        """`POST /v1/approvals`: the approval as `get_approval` shows it; `status` may already be
        approved or denied. A used `idempotency_key` answers that approval as it is now (after an
        edit: `edited`, the edited `arguments` and their `bindingHash`)."""
        return self._run(_flows.request_approval(action, arguments, session_id=session_id, agent=agent, message=message, risk=risk, expires_in_ms=expires_in_ms, idempotency_key=idempotency_key))

    def get_approval(self, approval_id: str, wait_ms: int = 0) -> Approval:
        """`GET /v1/approvals/{id}?wait=MS`: one long poll (the server bounds the wait)."""
        return self._run(_flows.get_approval(approval_id, wait_ms))

    def wait_approval(self, approval_id: str, timeout_s: float = DEFAULT_TIMEOUT_S, poll_s: float = 60.0) -> Approval:
        """Long-polls until the approval is no longer pending, or `timeout_s` passes (then it is still pending)."""
        return self._run(_flows.wait_approval(approval_id, timeout_s, poll_s))

    def consume(self, approval_id: str, binding_hash: str) -> Approval:
        """`POST /v1/approvals/{id}/consume`: succeeds once; a replay, another hash, expired or not approved raise (409)."""
        return self._run(_flows.consume(approval_id, binding_hash))

    def obtain_approval(self, action: str, arguments: Mapping[str, Any], *, accept_edits: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S, on_request: Optional[OnRequest] = None, **request: Any) -> Approval:
        """request → wait → consume: the approval, consumed for one run; run its `arguments`.

        `request` takes `request_approval`'s keywords. Raises `ApprovalDenied` (denied, expired,
        cancelled, pending after `timeout_s`), `ApprovalEdited` (an approver edited and
        `accept_edits` is false; not consumed) or `CountersignError` (e.g. 409 `already_consumed`:
        a retry of an operation that already ran).
        """
        return self._run(_flows.obtain_approval(action, arguments, accept_edits=accept_edits, timeout_s=timeout_s, on_request=on_request, **request))

    def decide(self, approval_id: str, decision: str, message: Optional[str] = None, arguments: Optional[Mapping[str, Any]] = None, grant: Union[str, Dict[str, int], None] = None) -> Dict[str, Any]:
        """`POST /v1/approvals/{id}`: approve (as asked, edited, with a grant) or deny (with a reply)."""
        return self._run(_flows.decide(approval_id, decision, message, arguments, grant))

    def list_approvals(self, status: str = "pending") -> List[ApprovalListItem]:
        """`GET /v1/approvals?status=pending|decided`: what the caller may see."""
        return self._run(_flows.list_approvals(status))

    def require_approval(self, action: str, *, agent: Optional[str] = None, message: Computed = None, risk: Optional[str] = None, session_id: Optional[str] = None, expires_in_ms: Optional[int] = None, idempotency_key: Computed = None, accept_edits: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S, on_request: Optional[OnRequest] = None) -> Callable[[F], F]:
        """Decorator: the function runs only after its arguments (bound by name) were approved as `action`.

        Each call is `obtain_approval`, then the function with the approved arguments (the
        approver's edit, unless `accept_edits=False`, which raises `ApprovalEdited` instead).
        `message` and `idempotency_key` may be functions of the arguments. An `async def` stays a
        coroutine function: the approval is awaited in a worker thread.
        """
        options = dict(agent=agent, message=message, risk=risk, session_id=session_id, expires_in_ms=expires_in_ms, idempotency_key=idempotency_key, accept_edits=accept_edits, timeout_s=timeout_s, on_request=on_request)

        def decorate(fn: F) -> F:
            requirement = self._requirement(fn, action, options)
            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def run_async(*args: Any, **kwargs: Any) -> Any:
                    approval = await asyncio.to_thread(self._run, requirement.flow(args, kwargs))
                    return await fn(**approval["arguments"])

                return run_async  # type: ignore[return-value]

            @functools.wraps(fn)
            def run(*args: Any, **kwargs: Any) -> Any:
                approval = self._run(requirement.flow(args, kwargs))
                return fn(**approval["arguments"])

            return run  # type: ignore[return-value]

        return decorate

    # -- questions (the Gateway methods) -----------------------------------------------------
    def gateway(self, method: str, params: Mapping[str, Any]) -> Any:
        """`POST /v1/gateway/{method}` → the payload (a refusal raises `CountersignError` with its reason)."""
        return self._run(_flows.gateway(method, params))

    def ask(self, question: str, options: Optional[List[str]] = None, header: str = "Question", multi_select: bool = False, timeout_ms: int = 600000, session_id: Optional[str] = None) -> Union[str, List[str]]:
        """Asks one person one question and waits for the answer: the chosen value (the list of
        values with `multi_select`). Raises `CountersignError` (`cancelled`, `expired`, `timeout`) when nobody answers."""
        return self._run(_flows.ask(question, options, header, multi_select, timeout_ms, session_id))


class AsyncCountersign(_Client):
    """The asyncio client: `Countersign`'s methods as coroutines. Each HTTP call runs in a worker
    thread (`asyncio.to_thread`, standard library only); cancelling a wait stops it after the call in flight."""

    async def _arun(self, flow: Flow[T]) -> T:
        reply: Any = None
        while True:
            try:
                call = flow.send(reply)
            except StopIteration as done:
                return done.value
            reply = await asyncio.to_thread(self._send, call)

    # -- approvals ------------------------------------------------------------------------
    async def request_approval(self, action: str, arguments: Mapping[str, Any], *, session_id: Optional[str] = None, agent: Optional[str] = None, message: Optional[str] = None, risk: Optional[str] = None, expires_in_ms: Optional[int] = None, idempotency_key: Optional[str] = None) -> Approval:
        """As `Countersign.request_approval`."""
        return await self._arun(_flows.request_approval(action, arguments, session_id=session_id, agent=agent, message=message, risk=risk, expires_in_ms=expires_in_ms, idempotency_key=idempotency_key))

    async def get_approval(self, approval_id: str, wait_ms: int = 0) -> Approval:
        """As `Countersign.get_approval`."""
        return await self._arun(_flows.get_approval(approval_id, wait_ms))

    async def wait_approval(self, approval_id: str, timeout_s: float = DEFAULT_TIMEOUT_S, poll_s: float = 60.0) -> Approval:
        """As `Countersign.wait_approval`."""
        return await self._arun(_flows.wait_approval(approval_id, timeout_s, poll_s))

    async def consume(self, approval_id: str, binding_hash: str) -> Approval:
        """As `Countersign.consume`."""
        return await self._arun(_flows.consume(approval_id, binding_hash))

    async def obtain_approval(self, action: str, arguments: Mapping[str, Any], *, accept_edits: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S, on_request: Optional[OnRequest] = None, **request: Any) -> Approval:
        """As `Countersign.obtain_approval`."""
        return await self._arun(_flows.obtain_approval(action, arguments, accept_edits=accept_edits, timeout_s=timeout_s, on_request=on_request, **request))

    async def decide(self, approval_id: str, decision: str, message: Optional[str] = None, arguments: Optional[Mapping[str, Any]] = None, grant: Union[str, Dict[str, int], None] = None) -> Dict[str, Any]:
        """As `Countersign.decide`."""
        return await self._arun(_flows.decide(approval_id, decision, message, arguments, grant))

    async def list_approvals(self, status: str = "pending") -> List[ApprovalListItem]:
        """As `Countersign.list_approvals`."""
        return await self._arun(_flows.list_approvals(status))

    def require_approval(self, action: str, *, agent: Optional[str] = None, message: Computed = None, risk: Optional[str] = None, session_id: Optional[str] = None, expires_in_ms: Optional[int] = None, idempotency_key: Computed = None, accept_edits: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S, on_request: Optional[OnRequest] = None) -> Callable[[Callable[..., Any]], Callable[..., Awaitable[Any]]]:
        """As `Countersign.require_approval`, awaited: the wrapped function (plain or `async def`)
        becomes a coroutine function that awaits the approval, then runs it."""
        options = dict(agent=agent, message=message, risk=risk, session_id=session_id, expires_in_ms=expires_in_ms, idempotency_key=idempotency_key, accept_edits=accept_edits, timeout_s=timeout_s, on_request=on_request)

        def decorate(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
            requirement = self._requirement(fn, action, options)
            is_async = inspect.iscoroutinefunction(fn)

            @functools.wraps(fn)
            async def run(*args: Any, **kwargs: Any) -> Any:
                approval = await self._arun(requirement.flow(args, kwargs))
                result = fn(**approval["arguments"])
                return (await result) if is_async else result

            return run

        return decorate

    # -- questions (the Gateway methods) -----------------------------------------------------
    async def gateway(self, method: str, params: Mapping[str, Any]) -> Any:
        """As `Countersign.gateway`."""
        return await self._arun(_flows.gateway(method, params))

    async def ask(self, question: str, options: Optional[List[str]] = None, header: str = "Question", multi_select: bool = False, timeout_ms: int = 600000, session_id: Optional[str] = None) -> Union[str, List[str]]:
        """As `Countersign.ask`."""
        return await self._arun(_flows.ask(question, options, header, multi_select, timeout_ms, session_id))
