"""User personas, "About you" (docs/about-you.md)."""
from ...routes import user_personas
from ..models import user_personas as u
from .common import FILE_FORM, PICTURE
from .table import Op

ROUTES = {"personas": (
    Op(user_personas.list_user_personas, u.UserPersonaList),
    Op(user_personas.create_user_persona, u.UserPersona, u.UserPersonaCreate, "400 409", "201"),
    Op(user_personas.set_default, u.UserPersonaList, u.DefaultChoice, "400 404"),
    Op(user_personas.get_user_persona, u.UserPersona, errors="404"),
    Op(user_personas.update_user_persona, u.UserPersona, u.UserPersonaPatch, "400 404"),
    Op(user_personas.delete_user_persona, u.UserPersonaList, errors="400 404 409"),
    Op(user_personas.get_avatar, PICTURE, errors="404"),
    Op(user_personas.put_avatar, u.UserPersona, FILE_FORM, "400 404 413 415 503"),
    Op(user_personas.delete_avatar, u.UserPersona, errors="400 404"),
)}
