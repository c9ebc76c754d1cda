"""docs/architecture.md's folder map is the one statement of the layout: every
folder it names exists, and every top-level folder of the tree is named."""
from __future__ import annotations

import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def named_folders() -> list[str]:
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as f:
        block = re.search(r"```folders\n(.*?)```", f.read(), re.S)
    assert block, "docs/architecture.md has no ```folders block"
    return [m.group(1).rstrip("/") for m in re.finditer(r"^(\S+/)\s", block.group(1), re.M)]


def top_level_folders() -> set[str]:
    try:
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True,
                               timeout=60).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # a source tree without .git (the sdist)
        return {d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d)) and not d.startswith(".")
                and not d.endswith(".egg-info") and d not in ("build", "dist")}
    return {f.split("/")[0] for f in files if "/" in f and not f.startswith(".")}


def test_every_folder_the_map_names_exists():
    names = named_folders()
    assert len(names) >= 15, names
    missing = [n for n in names if not os.path.isdir(os.path.join(ROOT, n))]
    assert not missing, f"docs/architecture.md names folders the tree lacks: {missing}"


def test_every_top_level_folder_is_named():
    named = {n.split("/")[0] for n in named_folders()}
    unnamed = sorted(top_level_folders() - named)
    assert not unnamed, f"top-level folders docs/architecture.md's folder map does not name: {unnamed}"


def test_every_runtime_layer_is_named():
    layers = os.path.join(ROOT, "internal", "cpython")
    present = {f"internal/cpython/{d}" for d in os.listdir(layers) if os.path.isdir(os.path.join(layers, d))
               and d != "__pycache__"}
    assert present and present <= set(named_folders()), sorted(present - set(named_folders()))
