"""Application services: each owns one concern and receives its collaborators in `__init__`."""
