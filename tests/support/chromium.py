"""The Chromium the browser tests drive: Debian's package, so a report can name its version."""
import subprocess

CHROMIUM = "/usr/bin/chromium"


def chromium_version(path: str = CHROMIUM) -> str:
    """`chromium --version` of the browser the tests launch, or why it could not be read."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({exc.__class__.__name__}: {exc})"
    return done.stdout.strip() or f"unknown (exit {done.returncode})"
