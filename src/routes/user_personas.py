"""User personas, "About you", over REST (DESIGN §16): thin views over UserPersonaService."""
from flask import Blueprint, Response, jsonify

from ..utils.models.user_personas import DefaultChoice
from ..utils.provider import get_user_persona_service
from .errors import ApiError, body, json_body
from .guards import no_body_or_json
from .portability import avatar_response, uploaded_file

bp = Blueprint("user_personas", __name__, url_prefix="/api/user-personas")


def _id(value: str) -> int:
    """A user persona id from the path; 404 before any lookup for anything else."""
    if not value.isdigit() or not value.isascii() or len(value) > 18 or int(value) < 1:
        raise ApiError(404, "user_persona_not_found", "No such user persona.")
    return int(value)


@bp.get("")
def list_user_personas() -> Response:
    """Every user persona ("About you"), the default first."""
    return jsonify(get_user_persona_service().list().model_dump(mode="json"))


@bp.post("")
def create_user_persona() -> tuple[Response, int]:
    """Create a user persona.

    At most 200 (409 `too_many_user_personas`).
    """
    created = get_user_persona_service().create(json_body())
    return jsonify(created.model_dump(mode="json")), 201


@bp.get("/<upid>")
def get_user_persona(upid: str) -> Response:
    """One user persona."""
    return jsonify(get_user_persona_service().get(_id(upid)).model_dump(mode="json"))


@bp.patch("/<upid>")
def update_user_persona(upid: str) -> Response:
    """Change name or description."""
    upid_ = _id(upid)
    return jsonify(get_user_persona_service().update(upid_, json_body()).model_dump(mode="json"))


@bp.delete("/<upid>")
def delete_user_persona(upid: str) -> Response:
    """Delete a user persona.

    Conversations that used it follow the default again. The default can be deleted only when it is
    the last one (else 409 `default_user_persona`).
    """
    upid_ = _id(upid)
    no_body_or_json()
    return jsonify(get_user_persona_service().delete(upid_).model_dump(mode="json"))


@bp.put("/default")
def set_default() -> Response:
    """Make a user persona the default."""
    chosen = body(DefaultChoice).id
    return jsonify(get_user_persona_service().make_default(chosen).model_dump(mode="json"))


@bp.get("/<upid>/avatar")
def get_avatar(upid: str) -> Response:
    """The user persona's avatar."""
    return avatar_response(get_user_persona_service().avatar(_id(upid)))


@bp.put("/<upid>/avatar")
def put_avatar(upid: str) -> Response:
    """Set the avatar (PNG, JPEG or WebP; re-encoded, metadata dropped)."""
    upid_ = _id(upid)
    changed = get_user_persona_service().set_avatar(upid_, uploaded_file(kind="picture"))
    return jsonify(changed.model_dump(mode="json"))


@bp.delete("/<upid>/avatar")
def delete_avatar(upid: str) -> Response:
    """Remove the avatar."""
    upid_ = _id(upid)
    no_body_or_json()
    return jsonify(get_user_persona_service().delete_avatar(upid_).model_dump(mode="json"))
