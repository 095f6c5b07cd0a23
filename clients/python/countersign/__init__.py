"""The Countersign client for Python: the standard library only (3.9+), synchronous and asyncio.

Ask a person before your agent runs an operation, and ask people questions:

    from countersign import ApprovalDenied, Countersign

    cs = Countersign("http://localhost:3000", api_key)    # or COUNTERSIGN_URL / COUNTERSIGN_API_KEY

    @cs.require_approval("send_email")
    def send_email(to: str, subject: str) -> None:
        ...                                                # runs only once approved (the approver's edit, if any)

    try:
        send_email(to="ops@example.com", subject="Deploy done")
    except ApprovalDenied as denied:
        print("not sent:", denied.message)                 # the approver's reply

    env = cs.ask("Which environment?", options=["staging", "prod"])

`require_approval` requests an approval (`POST /v1/approvals`) of the function's arguments, waits
for the decision (`GET /v1/approvals/{id}?wait=`), consumes it (`POST .../consume`, once, with the
binding hash of the arguments about to run) and then calls the function with the approved
arguments. `AsyncCountersign` does the same with coroutines.
"""

from .client import AsyncCountersign, Countersign
from .errors import ApprovalDenied, ApprovalEdited, CountersignError
from .types import Approval, ApprovalListItem, ApprovalStatus, QuestionResult, Risk

__all__ = ["Countersign", "AsyncCountersign", "CountersignError", "ApprovalDenied", "ApprovalEdited", "Approval", "ApprovalListItem", "ApprovalStatus", "QuestionResult", "Risk"]
__version__ = "0.1.0"
