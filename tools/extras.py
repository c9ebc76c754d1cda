"""Prints the requirements of pyproject.toml's optional-dependency groups
(self-references such as godlpack[test] expanded), quoted for a shell: the
Makefile installs `dev` from here, so each dependency is listed once."""
import shlex
import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
extras = project["optional-dependencies"]


def expand(group, seen):
    for req in extras[group]:
        if req.startswith(project["name"] + "["):
            for g in req[len(project["name"]) + 1:-1].split(","):
                if g not in seen:
                    seen.add(g)
                    yield from expand(g.strip(), seen)
        else:
            yield req


reqs = []
for group in sys.argv[1:]:
    for r in expand(group, {group}):
        if r not in reqs:
            reqs.append(r)
print(" ".join(shlex.quote(r) for r in reqs))
