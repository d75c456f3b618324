"""Export: the screen's files (Dart sources and assets under a folder), each scanned for
service keys before anything is written.

``svc_config.json`` (the game's SDK configuration, which holds its ``api_key``) is never
opened: it is skipped by name wherever it is, so the SDK key cannot be read, collected or
sent by this tool. Hidden folders and Flutter's build output are left out too.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from offer_author.secret_scan import SecretHit, scan

SDK_CONFIG = "svc_config.json"
SOURCE_EXTENSIONS = {".dart"}
ASSET_EXTENSIONS = {
    ".png", ".jpg", ".jpeg", ".webp", ".gif", ".svg",
    ".ttf", ".otf", ".json", ".arb", ".yaml", ".yml",
}
SKIPPED_DIRS = {"build", ".dart_tool", "node_modules", "__pycache__"}
MAX_FILE_BYTES = 16 * 1024 * 1024


@dataclass
class Finding:
    path: str
    hit: SecretHit

    def message(self) -> str:
        return (f"secret_pattern_found: {self.path}:{self.hit.line}: something shaped like "
                f"{self.hit.kind} (`{self.hit.prefix}_{self.hit.marker}_...`); remove it and "
                "export again")


@dataclass
class Collected:
    root: Path
    files: list = field(default_factory=list)  # (relative posix path, bytes)
    skipped: list = field(default_factory=list)  # (relative path, why)
    secrets: list = field(default_factory=list)  # Finding


def collect(root: Path) -> Collected:
    """Walks ``root`` in a stable order; reads every Dart source and asset, never
    ``svc_config.json``; scans each one it reads."""
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    result = Collected(root)
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(names):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if name.lower() == SDK_CONFIG:
                result.skipped.append((rel, "the game's SDK configuration: never read"))
                continue
            ext = path.suffix.lower()
            if ext not in SOURCE_EXTENSIONS and ext not in ASSET_EXTENSIONS:
                continue
            if path.is_symlink():
                result.skipped.append((rel, "a symbolic link: not followed"))
                continue
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                result.skipped.append((rel, f"larger than {MAX_FILE_BYTES} bytes"))
                continue
            data = path.read_bytes()
            for hit in scan(data):
                result.secrets.append(Finding(rel, hit))
            result.files.append((rel, data))
    return result


def bundle(collected: Collected) -> bytes:
    """A zip of the collected files and a ``manifest.json`` (path, size, SHA-256 of each)."""
    manifest = {
        "files": [
            {"path": rel, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
             "kind": "source" if rel.endswith(".dart") else "asset"}
            for rel, data in collected.files
        ],
        "skipped": [{"path": rel, "reason": why} for rel, why in collected.skipped],
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=2) + "\n")
        for rel, data in collected.files:
            z.writestr("files/" + rel, data)
    return buf.getvalue()
