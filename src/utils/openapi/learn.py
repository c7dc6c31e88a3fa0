"""Learning from an imported conversation (issue 24, docs/chat-import.md#learning-from-it)."""
from ...routes import learn
from ..models import learn as m
from ..models.conversations import NoFields
from .table import Op, query_of

ROUTES = {"sessions": (
    Op(learn.read_learning, m.LearnStatus, errors="404 409"),
    Op(learn.estimate_learning, m.LearnEstimate, errors="400 404 409",
       params=query_of(m.LearnEstimateQuery)),
    Op(learn.start_learning, m.LearnRun, m.LearnStart, "400 404 409", status="202",
       headers={"Location": {"schema": {"type": "string"}}}, optional_body=True),
    Op(learn.cancel_learning, m.LearnRun, NoFields, "400 404 409", optional_body=True),
)}
