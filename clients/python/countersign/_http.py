"""One `/v1` call over urllib (the standard library)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ._flows import Call
from .errors import CountersignError


def send(base_url: str, api_key: str, timeout: float, call: Call) -> Any:
    """The call's parsed JSON answer; a refusal raises `CountersignError` with the API's code."""
    data = None if call.body is None else json.dumps(call.body).encode("utf-8")
    req = urllib.request.Request(base_url + call.path, data=data, method=call.method)
    req.add_header("authorization", "Bearer " + api_key)
    req.add_header("accept", "application/json")
    if data is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout + call.wait_s) as res:
            text = res.read().decode("utf-8")
            return json.loads(text) if text else None
    except urllib.error.HTTPError as err:
        text = err.read().decode("utf-8", "replace")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise CountersignError(err.code, "http_error", text or "HTTP %d" % err.code) from None
        if parsed.get("ok") is False:
            error = parsed.get("error") or {}
            reason = (error.get("details") or {}).get("reason") or error.get("code") or "error"
            raise CountersignError(err.code, reason, error.get("message") or text) from None
        raise CountersignError(err.code, parsed.get("code", "http_error"), parsed.get("detail", text)) from None
