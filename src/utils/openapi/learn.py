"""Learning from an imported conversation (issue 24, docs/chat-import.md#learning-from-it)."""
from ...routes import learn
from ..models.conversations import NoFields
from ..models.learn import LearnEstimate, LearnEstimateQuery, LearnRun, LearnStart, LearnStatus
from .table import Op, query_of

_LOCATION = {"Location": {"schema": {"type": "string"}}}

ROUTES = {"sessions": (
    Op(learn.read_learning, LearnStatus, errors="404 409"),
    Op(learn.estimate_learning, LearnEstimate, errors="400 404 409",
       params=query_of(LearnEstimateQuery)),
    Op(learn.start_learning, LearnRun, LearnStart, "400 404 409", status="202",
       headers=_LOCATION, optional_body=True),
    Op(learn.cancel_learning, LearnRun, NoFields, "400 404 409", optional_body=True),
)}
