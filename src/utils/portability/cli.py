"""`python -m src.app backup PATH [--include-secrets]` and `restore PATH [--force]`."""
import argparse
import logging
import os

from ..services.errors import ServiceError
from .backup import write_backup_file
from .restore import restore_backup

log = logging.getLogger(__name__)


def run(argv: list[str], data_dir: str, refresh) -> int:
    """Runs one command; `refresh()` records cortex changes made on disk before a backup."""
    parser = argparse.ArgumentParser(prog="python -m src.app")
    commands = parser.add_subparsers(dest="command", required=True)
    backup = commands.add_parser("backup", help="write a backup zip of all data")
    backup.add_argument("path")
    backup.add_argument("--include-secrets", action="store_true",
                        help="include secrets.json (the API key entered in the UI)")
    restore = commands.add_parser("restore", help="restore a backup zip into the data directory")
    restore.add_argument("path")
    restore.add_argument("--force", action="store_true",
                         help="restore over a non-empty data directory (moved aside, not deleted)")
    args = parser.parse_args(argv)
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
