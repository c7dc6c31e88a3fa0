"""Domain errors map to HTTP in one place: the table in routes/errors.py, registered on the app.

No blueprint keeps handlers of its own for them (they used to be repeated per blueprint), and
every error of the table answers with its status, code and message wherever it is raised.
"""
import pytest

from src.routes.errors import DOMAIN_ERRORS
from src.utils.cortex.errors import ProposalDecided


def test_no_blueprint_maps_a_domain_error_itself(app):
    own = {(blueprint, kind.__name__) for blueprint, by_code in app.error_handler_spec.items()
           if blueprint is not None for handlers in by_code.values() for kind in handlers
           if kind in DOMAIN_ERRORS}
    assert own == set()


@pytest.mark.parametrize("kind", sorted(DOMAIN_ERRORS, key=lambda k: k.__name__),
                         ids=lambda k: k.__name__)
def test_every_domain_error_is_registered_on_the_app(app, kind):
    assert kind in app.error_handler_spec[None][None]


def test_a_domain_error_raised_in_any_view_gets_its_answer(app):
    @app.get("/test-only/decided")
    def decided():
        raise ProposalDecided("This proposal was already accepted.")

    response = app.test_client().get("/test-only/decided")
    assert response.status_code == 409
    assert response.get_json() == {"error": {"code": "proposal_decided",
                                             "message": "This proposal was already accepted."}}
