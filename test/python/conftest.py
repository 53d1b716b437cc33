"""Makes python/ggemm importable for the tests without installing it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))


def bundle_entries(manifest: dict) -> list:
    """The kernel entries of a bundle manifest: one for version 1, one per
    variant for version 2 (docs/Runtime.md)."""
    if manifest["version"] == 2:
        return [variant["entry"] for variant in manifest["variants"]]
    return [manifest["entry"]]
