"""Runs the Python client against a live server (COUNTERSIGN_URL, COUNTERSIGN_API_KEY).

Driven by tests/integration/clients.test.ts, which decides the approvals and answers the question
through /v1 as another user: each step prints one JSON line, so the driver knows what to decide.
Exits non-zero when a step does not behave as the client promises.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from countersign import ApprovalDenied, Countersign, CountersignError  # noqa: E402


def emit(**event):
    print(json.dumps(event), flush=True)


def main():
    cs = Countersign()
    ran = []

    @cs.require_approval("exec", message=lambda a: "Run %s?" % a["command"], on_request=lambda c: emit(event="requested", id=c["id"], status=c["status"]))
    def run(command):
        ran.append(command)
        return "ran " + command

    # 1. Approved with an edit: the function runs with the approver's arguments.
    emit(event="result", value=run(command="make deploy ENV=prod"))

    # 2. Denied with a reply: ApprovalDenied carries the message; nothing runs.
    try:
        run(command="rm -rf build")
        emit(event="ran-anyway")
        return 1
    except ApprovalDenied as denied:
        emit(event="denied", status=denied.status, message=denied.message)

    # 3. The agent's policy needs nobody for echo: it runs at once.
    @cs.require_approval("echo")
    def echo(text):
        return text

    emit(event="echo", value=echo(text="hi"))

    # 4. Consumed once: a second consume is refused (409 already_consumed).
    created = cs.request_approval("echo", {"text": "again"})
    cs.consume(created["id"], created["bindingHash"])
    try:
        cs.consume(created["id"], created["bindingHash"])
        emit(event="consumed-twice")
        return 1
    except CountersignError as err:
        emit(event="replay", status=err.status, code=err.code)

    # 5. An unknown action is refused with the server's sentence.
    try:
        cs.request_approval("launch_missiles", {})
        return 1
    except CountersignError as err:
        emit(event="unknown-action", status=err.status, code=err.code, detail=err.detail)

    # 6. A question, answered by a person.
    emit(event="asking")
    emit(event="answer", value=cs.ask("Which environment?", options=["staging", "prod"], header="Env"))
    emit(event="done", ran=ran)
    return 0


if __name__ == "__main__":
    sys.exit(main())
