"""Runs the installed `countersign` package against a live server (COUNTERSIGN_URL, COUNTERSIGN_API_KEY).

Driven by tests/integration/clients.test.ts, which installs the package from its built wheel into a
scratch virtual environment, runs this file there, and decides each approval through /v1 as another
user. Each step prints one JSON line; a `requested` line names its `step`, which tells the driver
how to decide (approve, approve with an edit, deny with a reply). Exits non-zero when a step does
not behave as the client promises.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any, List

import countersign
from countersign import ApprovalDenied, ApprovalEdited, AsyncCountersign, Countersign, CountersignError


def emit(**event: Any) -> None:
    print(json.dumps(event), flush=True)


def requested(step: str):
    return lambda created: emit(event="requested", step=step, id=created["id"], status=created["status"])


def retry_after_edit(cs: Countersign, step: str, key: str, command: str) -> None:
    """The first attempt of an operation: requested, then the agent stopped before the decision.
    It waits (as an observer) until the approver has edited and approved it, so the retry below
    meets the edit, never a pending approval."""
    first = cs.request_approval("exec", {"command": command}, idempotency_key=key)
    emit(event="requested", step=step, id=first["id"], status=first["status"])
    cs.wait_approval(first["id"])


def sync_steps(cs: Countersign, ran: List[str]) -> int:
    @cs.require_approval("exec", message=lambda a: "Run %s?" % a["command"], on_request=requested("edit"))
    def run(command: str) -> str:
        ran.append(command)
        return "ran " + command

    # Approved with an edit: the function runs with the approver's arguments.
    emit(event="edit", value=run(command="make deploy ENV=prod"))

    @cs.require_approval("exec", on_request=requested("deny"))
    def remove(command: str) -> None:
        ran.append(command)

    # Denied with a reply: ApprovalDenied carries the message; nothing runs.
    try:
        remove(command="rm -rf build")
        emit(event="ran-anyway")
        return 1
    except ApprovalDenied as denied:
        emit(event="deny", status=denied.status, message=denied.message)

    # The agent's policy needs nobody for echo: it runs at once.
    @cs.require_approval("echo")
    def echo(text: str) -> str:
        return text

    emit(event="echo", value=echo(text="hi"))

    # Consumed once: a second consume is refused (409 already_consumed).
    created = cs.request_approval("echo", {"text": "again"})
    cs.consume(created["id"], created["bindingHash"])
    try:
        cs.consume(created["id"], created["bindingHash"])
        emit(event="consumed-twice")
        return 1
    except CountersignError as err:
        emit(event="replay", status=err.status, code=err.code)

    # Arguments the action's schema refuses: 422 with the server's sentence.
    try:
        cs.request_approval("exec", {"command": 42})
        return 1
    except CountersignError as err:
        emit(event="invalid", status=err.status, code=err.code, detail=err.detail)

    # The retry after an edit: the same idempotency key answers the approval as it is now, and
    # the function runs the edited arguments, never the caller's.
    key = "retry-" + uuid.uuid4().hex
    retry_after_edit(cs, "retry", key, "deploy v1")

    @cs.require_approval("exec", idempotency_key=lambda a: key, on_request=lambda c: emit(event="retried", status=c["status"], edited=c["edited"], arguments=c["arguments"]))
    def deploy(command: str) -> str:
        ran.append(command)
        return "ran " + command

    emit(event="retry", value=deploy(command="deploy v1"))

    # The same with edits refused: ApprovalEdited, nothing runs, the approval stays unconsumed.
    refused_key = "refused-" + uuid.uuid4().hex
    retry_after_edit(cs, "retry-refused", refused_key, "deploy v1")

    @cs.require_approval("exec", idempotency_key=refused_key, accept_edits=False)
    def strict_deploy(command: str) -> None:
        ran.append(command)

    try:
        strict_deploy(command="deploy v1")
        emit(event="ran-edited-anyway")
        return 1
    except ApprovalEdited as edited:
        emit(event="retry-refused", id=edited.approval_id, arguments=edited.arguments, original=edited.original_arguments, denied=isinstance(edited, ApprovalDenied))

    # The caller's own action, declared by no agent: a person approves it (an edit of the
    # subject), and the function runs with what was approved.
    @cs.require_approval("send_email", on_request=requested("send-email"))
    def send_email(to: str, subject: str) -> str:
        return 'sent "%s" to %s' % (subject, to)

    emit(event="send-email", value=send_email(to="ops@example.com", subject="Weekly report"))

    # A question, answered by a person.
    emit(event="asking")
    emit(event="answer", value=cs.ask("Which environment?", options=["staging", "prod"], header="Env"))
    return 0


async def async_steps(acs: AsyncCountersign, cs: Countersign, ran: List[str]) -> int:
    @acs.require_approval("exec", on_request=requested("async-def"))
    async def run_async(command: str) -> str:
        await asyncio.sleep(0)
        ran.append(command)
        return "async ran " + command

    emit(event="async-def", value=await run_async(command="make test"))

    @acs.require_approval("exec", on_request=requested("async-plain"))
    def run_plain(command: str) -> str:
        ran.append(command)
        return "plain ran " + command

    emit(event="async-plain", value=await run_plain(command="make lint"))

    @acs.require_approval("exec", on_request=requested("async-deny"))
    async def drop(command: str) -> None:
        ran.append(command)

    try:
        await drop(command="make clean")
        emit(event="ran-anyway")
        return 1
    except ApprovalDenied as denied:
        emit(event="async-deny", status=denied.status, message=denied.message)

    key = "async-retry-" + uuid.uuid4().hex
    await asyncio.to_thread(retry_after_edit, cs, "async-retry", key, "deploy v3")

    @acs.require_approval("exec", idempotency_key=key)
    async def deploy(command: str) -> str:
        ran.append(command)
        return "async ran " + command

    emit(event="async-retry", value=await deploy(command="deploy v3"))

    # The synchronous client keeps an `async def` a coroutine function (the wait runs in a thread).
    @cs.require_approval("exec", on_request=requested("sync-client-async-def"))
    async def run_from_sync(command: str) -> str:
        ran.append(command)
        return "ran " + command

    emit(event="sync-client-async-def", value=await run_from_sync(command="make docs"), coroutine=asyncio.iscoroutinefunction(run_from_sync))
    return 0


def main() -> int:
    emit(event="module", file=countersign.__file__, version=countersign.__version__)
    cs = Countersign()
    ran: List[str] = []
    if sync_steps(cs, ran) != 0:
        return 1
    if asyncio.run(async_steps(AsyncCountersign(), cs, ran)) != 0:
        return 1
    emit(event="done", ran=ran)
    return 0


if __name__ == "__main__":
    sys.exit(main())
