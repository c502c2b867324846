"""The UC San Diego catalogue with its requirement groups: ``requirements.json`` -> a bundle.

The development graph ``../shared/dev-graphs/ucsd-catalogue`` (see its README) holds each course's
whole prerequisite expression in ``requirements.json`` (a course id, or ``{type: all | one | two,
courses: [...]}``, nested), while its ``concept_edges.csv`` keeps only the single and AND-required
courses. This writes a ``kg-bundle/1`` folder that holds the whole expressions::

    python -m evals.catalogue_groups ../shared/dev-graphs/ucsd-catalogue OUTDIR
    kg import OUTDIR

The folder is the catalogue's ``manifest.json``, ``concepts.csv`` and ``concept_edges.csv`` as they
are, plus what the expressions add (docs/bundles.md, "Requirement groups"):

* ``requirement_groups.csv`` and ``requirement_members.csv``: each course's expression normalised
  (``data_plane.requirements.normalise``) into plain prerequisites and groups; group ``C.n`` is the
  n-th group of course ``C``;
* the courses an expression names that the six department pages do not list (``COGS 102C``,
  retired numbers such as ``MATH 220C``) as concepts of their own, named by their code (id: the
  code as a slug), so that every expression is kept exactly: dropping an alternative would make
  a requirement stricter than the catalogue's, dropping a required course laxer;
* the plain prerequisites on such courses, which the catalogue's edges leave out, as edges.

A course naming itself (DSC 500) names nothing: that part is dropped. Nothing of the catalogue is
copied into the project; the folder is written where you say.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from data_plane.bundle_rows import (
    CONCEPTS,
    EDGES,
    GROUP_COLUMNS,
    GROUPS,
    MANIFEST,
    MEMBER_COLUMNS,
    MEMBERS,
    csv_writer,
)
from data_plane.requirements import Normalised, normalise

__all__ = ["Converted", "convert", "main", "outside_id", "strip_self"]

REQUIREMENTS: Final = "requirements.json"
_CONFIDENCE: Final = "0.9"


def outside_id(code: str) -> str:
    """The id of a course the catalogue names but does not list: its code as a slug."""
    return re.sub(r"[^a-z0-9]+", "_", code.lower()).strip("_")


def strip_self(expression: Any, course: str) -> Any | None:
    """``expression`` without the parts naming ``course`` itself (None when nothing is left)."""
    if isinstance(expression, str):
        return None if expression == course else expression
    parts = [p for p in (strip_self(c, course) for c in expression["courses"]) if p is not None]
    return {**expression, "courses": parts} if parts else None


def _resolved(expression: Any, known: set[str]) -> Any:
    """Course codes the catalogue does not list replaced by their concept ids."""
    if isinstance(expression, str):
        return expression if expression in known else outside_id(expression)
    return {**expression, "courses": [_resolved(c, known) for c in expression["courses"]]}


def _codes(expression: Any) -> list[str]:
    if isinstance(expression, str):
        return [expression]
    return [code for c in expression["courses"] for code in _codes(c)]


@dataclass(frozen=True)
class Converted:
    """What :func:`convert` wrote: courses with a requirement, groups, members, the courses added
    because an expression names them, and the plain edges added on them."""

    courses: int
    groups: int
    members: int
    outside: int
    outside_edges: int

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _evidence(commit: str, source: str, **more: Any) -> str:
    file = source.split(" ", 1)[-1]
    return json.dumps({"repository": "wllmwu/course-grapher", "commit": commit, "file": file, **more})


def _names(ids: Sequence[str], name: Mapping[str, str]) -> str:
    return ", ".join(name[i] for i in ids)


def convert(source: Path, out: Path) -> Converted:
    """Write the bundle folder ``out`` from the catalogue folder ``source`` (module docstring)."""
    manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    commit = str(manifest.get("defaults", {}).get("evidence", {}).get("commit", ""))
    concepts = _rows(source / CONCEPTS)
    known = {r["id"] for r in concepts}
    name = {r["id"]: r["name"] for r in concepts}
    origin = {r["id"]: r["source"] for r in concepts}
    expressions: dict[str, Any] = json.loads((source / REQUIREMENTS).read_text(encoding="utf-8"))[
        "requirements"
    ]

    outside: dict[str, tuple[str, str]] = {}  # id -> (code, first course naming it)
    normalised: dict[str, Normalised] = {}
    for course, expression in sorted(expressions.items()):
        kept = strip_self(expression, course)
        if kept is None:
            continue
        for code in _codes(kept):
            if code not in known:
                outside.setdefault(outside_id(code), (code, course))
        normalised[course] = normalise(_resolved(kept, known))
    name.update({cid: code for cid, (code, _) in outside.items()})

    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / MANIFEST, out / MANIFEST)
    shutil.copyfile(source / CONCEPTS, out / CONCEPTS)
    shutil.copyfile(source / EDGES, out / EDGES)
    stored = {(r["source_id"], r["target_id"]) for r in _rows(source / EDGES)}
    with (out / CONCEPTS).open("a", encoding="utf-8", newline="") as fh:
        writer = csv_writer(fh)
        for cid, (code, course) in sorted(outside.items()):
            why = (
                f"{code} is named in the prerequisites of {name[course]} in the UC San Diego General "
                "Catalog; it is not listed on the six department pages this catalogue covers"
            )
            ev = _evidence(
                commit, origin[course], field="prereqs", value=code, kept_as="course named, not listed"
            )
            writer.writerow([cid, code, "", "", _CONFIDENCE, why, origin[course], ev])
    added = 0
    with (out / EDGES).open("a", encoding="utf-8", newline="") as fh:
        writer = csv_writer(fh)
        for course, spec in normalised.items():
            for before in sorted(spec.plain - known):
                if (before, course) in stored:
                    continue
                why = f"The UC San Diego catalogue requires {name[before]} before {name[course]}"
                ev = _evidence(
                    commit, origin[course], field="prereqs", value=name[before], kept_as="required course"
                )
                writer.writerow([before, course, "prerequisite", _CONFIDENCE, why, origin[course], ev])
                added += 1
    groups = members = 0
    with (
        (out / GROUPS).open("w", encoding="utf-8", newline="") as gfh,
        (out / MEMBERS).open("w", encoding="utf-8", newline="") as mfh,
    ):
        gw, mw = csv_writer(gfh), csv_writer(mfh)
        gw.writerow(GROUP_COLUMNS[:7])
        mw.writerow(MEMBER_COLUMNS[:7])
        for course, spec in normalised.items():
            for n, group in enumerate(spec.groups, 1):
                gid = f"{course}.{n}"
                ways = "; or ".join(" and ".join(name[c] for c in sorted(o)) for o in group.options)
                kind = "one" if group.needs == 1 else f"{group.needs}"
                why = f"The UC San Diego catalogue requires {kind} of: {ways}; before {name[course]}"
                ev = _evidence(commit, origin[course], field="prereqs", kept_as=f"{kind}-of group {n}")
                gw.writerow([gid, course, str(group.needs), _CONFIDENCE, why, origin[course], ev])
                groups += 1
                for option, concepts_of in enumerate(group.options, 1):
                    for cid in sorted(concepts_of):
                        why = f"{name[cid]} is part of option {option} of requirement {n} of {name[course]}"
                        mw.writerow([gid, str(option), cid, _CONFIDENCE, why, origin[course], ev])
                        members += 1
    return Converted(len(normalised), groups, members, len(outside), added)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.catalogue_groups", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("source", type=Path, help="the ucsd-catalogue folder (with requirements.json)")
    parser.add_argument("out", type=Path, help="the bundle folder to write")
    args = parser.parse_args(argv)
    if not (args.source / REQUIREMENTS).is_file():
        print(f"error: no {REQUIREMENTS} in {args.source}", file=sys.stderr)
        return 1
    print(json.dumps(convert(args.source, args.out).to_dict()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
