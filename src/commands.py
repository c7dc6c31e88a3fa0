"""The command line of `python -m src.app`: `serve` (the default), `backup` and `restore`.

Only argparse here: the parser runs in gunicorn's master process, which never builds the app, so
it must not import it (`serve.py`). `--help` on the program or on a command prints its usage and
exits 0 before any setting is read or any server starts.
"""
import argparse

PROG = "python -m src.app"
DESCRIPTION = ("Persona Cortex. Without a command (or with `serve`) it serves the app with "
               "gunicorn on http://PERSONA_HOST:PERSONA_PORT (default 127.0.0.1:5000).")
EPILOG = ("Settings come from the environment or a .env file in the working directory: "
          "PERSONA_DATA_DIR, PERSONA_HOST, PERSONA_PORT, PERSONA_ACCESS_TOKEN, PERSONA_WORKERS, "
          "PERSONA_HEADER_TIMEOUT, PERSONA_LOG_LEVEL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, "
          "PERSONA_PROVIDER, OPENAI_BASE_URL, OPENAI_API_KEY (README.md, Configuration). "
          "`backup` and `restore` work on PERSONA_DATA_DIR (docs/portability.md).")


def parser() -> argparse.ArgumentParser:
    """The parser of every command, with the help each one prints."""
    top = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG)
    commands = top.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("serve", help="serve the app (the default)",
                        description="Serves the app with gunicorn and gevent workers.")
    backup = commands.add_parser("backup", help="write a backup zip of all data",
                                 description="Writes a backup zip of the data directory.")
    backup.add_argument("path", metavar="PATH", help="where to write the zip")
    backup.add_argument("--include-secrets", action="store_true",
                        help="include secrets.json (the API key entered in the UI)")
    restore = commands.add_parser("restore", help="restore a backup zip into the data directory",
                                  description="Restores a backup zip into the data directory.")
    restore.add_argument("path", metavar="PATH", help="the backup zip")
    restore.add_argument("--force", action="store_true",
                         help="restore over a non-empty data directory (moved aside, not deleted)")
    return top


def parse(argv: list[str]) -> argparse.Namespace:
    """The command and its arguments; `command` is "serve" when none was given. Exits (status 0
    after `--help`, 2 with the usage on a wrong argument) like any argparse program."""
    args = parser().parse_args(argv)
    args.command = args.command or "serve"
    return args
