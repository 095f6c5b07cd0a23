"""A small Countersign client for Python 3.8+: the standard library only.

Ask a person before your agent runs an operation, and ask people questions:

    from countersign import Countersign, ApprovalDenied

    cs = Countersign("http://localhost:3000", api_key)   # or COUNTERSIGN_URL / COUNTERSIGN_API_KEY

    @cs.require_approval("exec")
    def run(command):
        ...                                               # runs only once approved (with edited arguments, if any)

    try:
        run(command="make deploy")
    except ApprovalDenied as denied:
        print("not run:", denied.message)

    env = cs.ask("Which environment?", options=["staging", "prod"])

`require_approval` requests an approval (`POST /v1/approvals`) with the function's arguments,
waits for the decision (`GET /v1/approvals/{id}?wait=`), consumes it (`POST .../consume`, once,
with the binding hash of the arguments about to run) and then calls the function, with the
approver's edited arguments when there are some. A denial, an expiry or a timeout raises
`ApprovalDenied` carrying the reply message.
"""

import functools
import inspect
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Countersign", "CountersignError", "ApprovalDenied"]


class CountersignError(Exception):
    """A refused request: the HTTP status and the contract's `{detail, code}`."""

    def __init__(self, status, code, detail):
        super().__init__("%s %s: %s" % (status, code, detail))
        self.status = status
        self.code = code
        self.detail = detail


class ApprovalDenied(Exception):
    """The operation must not run: denied (with the approver's reply, if any), expired or not decided in time."""

    def __init__(self, approval_id, status, message=None):
        super().__init__(message or "The approval %s was %s; the operation was not run." % (approval_id, status))
        self.approval_id = approval_id
        self.status = status
        self.message = message


class Countersign:
    def __init__(self, base_url=None, api_key=None, timeout=90.0):
        self.base_url = (base_url or os.environ.get("COUNTERSIGN_URL") or "http://localhost:3000").rstrip("/")
        self.api_key = api_key or os.environ.get("COUNTERSIGN_API_KEY")
        if not self.api_key:
            raise ValueError("An API key is needed: pass api_key or set COUNTERSIGN_API_KEY.")
        self.timeout = timeout

    # -- HTTP -----------------------------------------------------------------------------
    def _call(self, method, path, body=None, timeout=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("authorization", "Bearer " + self.api_key)
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as res:
                text = res.read().decode("utf-8")
                return res.status, (json.loads(text) if text else None)
        except urllib.error.HTTPError as err:
            text = err.read().decode("utf-8", "replace")
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = {}
            if isinstance(parsed, dict) and parsed.get("ok") is False:
                error = parsed.get("error") or {}
                reason = (error.get("details") or {}).get("reason") or error.get("code") or "error"
                raise CountersignError(err.code, reason, error.get("message") or text) from None
            raise CountersignError(err.code, parsed.get("code", "http_error"), parsed.get("detail", text)) from None

    # -- approvals ------------------------------------------------------------------------
    def request_approval(self, action, arguments, session_id=None, agent=None, message=None, risk=None, expires_in_ms=None, idempotency_key=None):
        """`POST /v1/approvals` -> {id, status, bindingHash, expiresAtMs}; status may already be approved or denied."""
        body = {"action": action, "arguments": arguments}
        for key, value in (("sessionId", session_id), ("agent", agent), ("message", message), ("risk", risk), ("expiresInMs", expires_in_ms), ("idempotencyKey", idempotency_key)):
            if value is not None:
                body[key] = value
        return self._call("POST", "/v1/approvals", body)[1]

    def get_approval(self, approval_id, wait_ms=0):
        """`GET /v1/approvals/{id}?wait=MS`: one long poll (the server bounds the wait)."""
        query = "?wait=%d" % int(wait_ms) if wait_ms else ""
        return self._call("GET", "/v1/approvals/%s%s" % (urllib.parse.quote(approval_id, safe=""), query), timeout=self.timeout + wait_ms / 1000.0)[1]

    def wait_approval(self, approval_id, timeout_s=900.0, poll_s=60.0):
        """Long-polls until the approval is no longer pending, or `timeout_s` passes (then it is still pending)."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            approval = self.get_approval(approval_id, wait_ms=int(max(0.0, min(left, poll_s)) * 1000))
            if approval["status"] != "pending" or deadline - time.monotonic() <= 0:
                return approval

    def consume(self, approval_id, binding_hash):
        """`POST /v1/approvals/{id}/consume`: succeeds once; a replay, another hash, expired or not approved raise (409)."""
        return self._call("POST", "/v1/approvals/%s/consume" % urllib.parse.quote(approval_id, safe=""), {"bindingHash": binding_hash})[1]

    def decide(self, approval_id, decision, message=None, arguments=None):
        """`POST /v1/approvals/{id}`: approve (as asked or with edited arguments) or deny (with a reply)."""
        body = {"decision": decision}
        if message is not None:
            body["message"] = message
        if arguments is not None:
            body["arguments"] = arguments
        return self._call("POST", "/v1/approvals/%s" % urllib.parse.quote(approval_id, safe=""), body)[1]

    def list_approvals(self, status="pending"):
        return self._call("GET", "/v1/approvals?status=" + status)[1]["approvals"]

    def require_approval(self, action, agent=None, message=None, risk=None, timeout_s=900.0, on_request=None):
        """Decorator: the function runs only after a person (or a grant, or the policy) approved its arguments.

        The function's arguments, bound by name, are the operation's arguments. When the approver
        edited them, the function is called with the edited ones. `on_request(created)` is called
        with the new approval (e.g. to log its id). Raises `ApprovalDenied` otherwise.
        """

        def decorate(fn):
            signature = inspect.signature(fn)

            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                text = message(arguments) if callable(message) else message
                created = self.request_approval(action, arguments, agent=agent, message=text, risk=risk)
                if on_request is not None:
                    on_request(created)
                approval = created if created["status"] != "pending" else self.wait_approval(created["id"], timeout_s=timeout_s)
                if approval["status"] == "approved" and "arguments" not in approval:
                    approval = self.get_approval(created["id"])
                if approval["status"] != "approved":
                    raise ApprovalDenied(created["id"], approval["status"], approval.get("message"))
                self.consume(approval["id"], approval["bindingHash"])
                return fn(**approval["arguments"])

            return wrapper

        return decorate

    # -- questions (the Gateway methods) -----------------------------------------------------
    def gateway(self, method, params):
        """`POST /v1/gateway/{method}` -> the payload (a refusal raises CountersignError with its reason)."""
        return self._call("POST", "/v1/gateway/" + method, params)[1]["payload"]

    def ask(self, question, options=None, header="Question", multi_select=False, timeout_ms=600000, session_id=None):
        """Asks one person one question and waits for the answer.

        Returns the chosen value (a string), or the list of values with `multi_select`. Raises
        `CountersignError` with code `cancelled` or `expired` when nobody answers.
        """
        q = {"questionId": "answer", "header": header[:12], "question": question, "options": [{"label": str(o)} for o in (options or [])]}
        if multi_select:
            q["multiSelect"] = True
        params = {"questions": [q], "timeoutMs": int(timeout_ms)}
        if session_id is not None:
            params["sessionId"] = session_id
        created = self.gateway("question.request", params)
        deadline = time.monotonic() + timeout_ms / 1000.0 + 5
        while True:
            left = max(1.0, min(60.0, deadline - time.monotonic()))
            result = self._call("POST", "/v1/gateway/question.waitAnswer", {"id": created["id"], "timeoutMs": int(left * 1000)}, timeout=self.timeout + left)[1]["payload"]
            if result["status"] == "answered":
                values = result["answers"].get("answer", [])
                return values if multi_select else (values[0] if values else "")
            if result["status"] != "pending":
                raise CountersignError(409, result["status"], "The question was %s before anyone answered." % result["status"])
            if time.monotonic() >= deadline:
                raise CountersignError(504, "timeout", "Nobody answered in time.")
