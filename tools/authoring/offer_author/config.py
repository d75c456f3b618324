"""Where the authoring key is kept: ``$XDG_CONFIG_HOME/offer-author/credentials.json``
(``~/.config/offer-author/credentials.json`` when the variable is unset). The folder is made
with mode 0700 and the file is written with mode 0600 (readable by its owner only), through a
temporary file in the same folder renamed over the old one, so a crash never leaves half a key.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

FILE_NAME = "credentials.json"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    # The XDG rule: a relative value is invalid and ignored.
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "offer-author"


def credentials_path() -> Path:
    return config_dir() / FILE_NAME


def save_credentials(record: dict) -> Path:
    """Writes ``record`` (it holds ``authoring_key``) with mode 0600; returns the path."""
    folder = config_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    # An existing folder keeps its mode unless it lets others in: then it is closed.
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode & 0o077:
        os.chmod(folder, 0o700)
    path = folder / FILE_NAME
    tmp = folder / f".{FILE_NAME}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def load_credentials() -> dict | None:
    """The stored record, or None when there is none. A file others can read is still
    read, with a warning from the caller (``loose_mode``)."""
    path = credentials_path()
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise CredentialsError(f"cannot read {path}: {e}; sign in again with `offer-author login`")
    if not isinstance(record, dict) or not isinstance(record.get("authoring_key"), str):
        raise CredentialsError(f"{path} holds no authoring key; sign in again with `offer-author login`")
    return record


def loose_mode(path: Path | None = None) -> bool:
    """True when the credentials file can be read by others than its owner."""
    path = path or credentials_path()
    try:
        return bool(stat.S_IMODE(path.stat().st_mode) & 0o077)
    except FileNotFoundError:
        return False


def delete_credentials() -> bool:
    try:
        credentials_path().unlink()
        return True
    except FileNotFoundError:
        return False


class CredentialsError(Exception):
    pass
