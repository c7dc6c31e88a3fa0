"""The cortex: each persona's memory.md, soul.md and relationship.md (DESIGN §5)."""
from .errors import (
    CortexSizeError,
    InvalidContent,
    InvalidFilename,
    InvalidPersonaId,
    PersonaNotFound,
    RevisionConflict,
    RevisionNotFound,
    UnsafePath,
)
from .paths import CORTEX_FILES, DEFAULT_PERSONA
from .service import CortexService

__all__ = ["CORTEX_FILES", "DEFAULT_PERSONA", "CortexService", "CortexSizeError",
           "InvalidContent", "InvalidFilename", "InvalidPersonaId", "PersonaNotFound",
           "RevisionConflict", "RevisionNotFound", "UnsafePath"]
