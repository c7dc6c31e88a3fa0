"""`python -m src.app backup PATH [--include-secrets]` and `restore PATH [--force]`."""
import argparse
import logging
import os
from collections.abc import Callable

from ..services.errors import ServiceError
from .backup import write_backup_file
from .restore import restore_backup

log = logging.getLogger(__name__)


def run(args: argparse.Namespace, data_dir: str, refresh: Callable[[], object]) -> int:
    """Runs `backup` or `restore` as parsed by `src/commands.py`; `refresh()` records cortex
    changes made on disk before a backup."""
    try:
        if args.command == "backup":
            refresh()
            manifest = write_backup_file(data_dir, args.path,
                                         include_secrets=args.include_secrets)
            print(f"Backup written to {args.path} ({len(manifest['entries'])} entries, "
                  f"schema {manifest['schema_version']}"
                  f"{', with secrets' if manifest['include_secrets'] else ''}).")
        else:
            if not os.path.isfile(args.path):
                print(f"No such file: {args.path}")
                return 1
            result = restore_backup(args.path, data_dir, force=args.force)
            if result["moved_aside"]:
                print(f"The previous data directory was moved to {result['moved_aside']}.")
            print(f"Restored {args.path} into {data_dir}.")
    except ServiceError as err:
        print(f"Refused: {err.message}")
        return 1
    return 0
