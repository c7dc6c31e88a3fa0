"""Seed 000's test layout: code written against the seed imports `utils.api_request` with `src/` on
`sys.path`. Appended (not prepended), so no installed package can be shadowed by our names."""
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
if SRC not in sys.path:
    sys.path.append(SRC)
