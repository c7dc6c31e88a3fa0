"""The prompt inspector and the context meter (docs/prompt-inspector.md)."""
from ..models import inspector as i
from .table import Op

ROUTES = {"messages": (
    Op("get", "/api/sessions/{sid}/messages/{mid}/prompt", "The request a reply was generated "
       "from.", i.ReplyPrompt, errors="400 404", description="`400 not_a_reply` for a person's "
       "message; `404` for an unknown session or a message of another session."),
    Op("get", "/api/sessions/{sid}/context", "How full the context window was with the last "
       "request of the active branch.", i.ContextMeter, errors="404"),
)}
