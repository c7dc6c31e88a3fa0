"""The prompt inspector and the context meter (docs/prompt-inspector.md)."""
from ...routes import messages
from ..models import inspector as i
from .table import Op

ROUTES = {"messages": (
    Op(messages.read_prompt, i.ReplyPrompt, errors="400 404"),
    Op(messages.read_context, i.ContextMeter, errors="404"),
)}
