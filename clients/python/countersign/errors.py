"""What the client raises."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .types import Approval

__all__ = ["CountersignError", "ApprovalDenied", "ApprovalEdited"]


class CountersignError(Exception):
    """A refused request: the HTTP status and the API's `{detail, code}` (or a Gateway method's reason)."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__("%s %s: %s" % (status, code, detail))
        self.status = status
        self.code = code
        self.detail = detail


class ApprovalDenied(Exception):
    """The operation must not run: denied (`message`: the approver's reply, if any), expired,
    cancelled, or still pending when the wait ran out (`status` says which)."""

    def __init__(self, approval: Approval, text: Optional[str] = None) -> None:
        super().__init__(text or approval.get("message") or "The approval %s was %s; the operation was not run." % (approval["id"], approval["status"]))
        self.approval = approval
        self.approval_id: str = approval["id"]
        self.status: str = approval["status"]
        self.message: Optional[str] = approval.get("message")


class ApprovalEdited(ApprovalDenied):
    """Approved with arguments an approver edited, and the caller refused edits (`accept_edits=False`):
    nothing ran and the approval was not consumed. `arguments` are the edited ones,
    `original_arguments` the requested ones."""

    def __init__(self, approval: Approval) -> None:
        super().__init__(approval, "An approver edited the arguments of %s, and edits are refused (accept_edits=False); the operation was not run." % approval["id"])
        self.arguments: Dict[str, Any] = approval["arguments"]
        self.original_arguments: Optional[Dict[str, Any]] = approval.get("originalArguments")
