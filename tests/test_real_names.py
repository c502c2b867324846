"""A real map's own names: "Edge", "k-means++", "C++", "Hooke's law", "Motion (physics)", a name
inside a longer name, a name in Chinese. It imports without flags, and every question is answered
about the concept it names (or abstains with the candidates), on both engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kg_cli import GROUNDED, kg, ok

CONCEPTS = [
    ("algebra", "Algebra", ""),
    ("calculus", "Calculus", ""),
    ("edge", "Edge", ""),
    ("graph", "Graph", ""),
    ("kmeans", "k-means", ""),
    ("kmeanspp", "k-means++", ""),
    ("c", "C", ""),
    ("cpp", "C++", ""),
    ("csharp", "C#", ""),
    ("hooke", "Hooke's law", ""),
    ("motion", "Motion (physics)", ""),
    ("multiple_integrals", "Multiple integrals", ""),
    ("change_of_variables", "Evaluating multiple integrals: change of variables", ""),
    ("ml_zh", "机器学习", ""),
    ("attention_mechanism", "Attention mechanism", ""),
    ("self_attention", "Self-attention", ""),
    ("web2", "Web 2.0", ""),
    ("path", "Path", ""),
    ("year", "Year", ""),
    ("lesson", "Lesson", ""),
    ("r", "R", ""),
]
EDGES = [
    ("algebra", "calculus"),
    ("edge", "graph"),
    ("kmeans", "kmeanspp"),
    ("c", "cpp"),
    ("c", "csharp"),
    ("algebra", "hooke"),
    ("calculus", "motion"),
    ("calculus", "multiple_integrals"),
    ("multiple_integrals", "change_of_variables"),
    ("algebra", "ml_zh"),
    ("web2", "ml_zh"),
    ("attention_mechanism", "self_attention"),
    ("web2", "path"),
    ("path", "year"),
    ("year", "lesson"),
    ("web2", "r"),
    ("algebra", "r"),
]


def write_bundle(folder: Path, concepts: list[tuple[str, str, str]] = CONCEPTS) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "format": "kg-bundle/1",
                "name": "real-names",
                "defaults": {
                    "source": "test",
                    "reason": "a real map's names",
                    "confidence": 0.9,
                    "evidence": {"test": "names"},
                    "valid_at": "2024-01-01",
                },
            }
        ),
        encoding="utf-8",
    )
    rows = ["id,name,aliases,summary", *(f'{i},"{n}",{a},' for i, n, a in concepts)]
    (folder / "concepts.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    edges = ["source_id,target_id,relation", *(f"{a},{b},prerequisite" for a, b in EDGES)]
    (folder / "concept_edges.csv").write_text("\n".join(edges) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def real_map(database_url: str, tmp_path: Path) -> str:
    """A migrated database (both engines) holding the map, imported without any flag."""
    ok(database_url, "init", "--no-curriculum")
    ok(database_url, "import", str(write_bundle(tmp_path / "bundle")))
    return database_url


def answer(url: str, question: str) -> dict[str, object]:
    result = kg(url, "ask", question, "--format", "json")
    assert result.exit_code in (0, 3), result.output
    out: dict[str, object] = json.loads(result.stdout)
    return out


def members(url: str, question: str) -> set[str]:
    a = answer(url, question)
    assert not a["abstained"], a["abstain_reason"]
    result = a["result"]
    assert isinstance(result, dict)
    return set(result["members"])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What comes before calculus?", {"algebra"}),
        ("What comes before Graph?", {"edge"}),
        ("What do I need before k-means++?", {"kmeans"}),
        ("What comes after k-means?", {"kmeanspp"}),
        ("what does c++ need?", {"c"}),
        ("What needs C?", {"cpp", "csharp"}),
        ("What comes before C#?", {"c"}),
        ("What comes before hookes law?", {"algebra"}),
        ("What comes before Hooke law?", {"algebra"}),
        ("What do I need before motion?", {"algebra", "calculus"}),
        (
            "What comes directly before evaluating multiple integrals: change of variables?",
            {"multiple_integrals"},
        ),
        ("What comes directly after multiple integrals?", {"change_of_variables"}),
        ("What do I need before 机器学习?", {"algebra", "web2"}),
        # a number's dot is no sentence end; a sentence's dot after a number is
        ("I'm new to Web 2.0. What do I need before Year?", {"web2", "path"}),
        # an everyday name opening the question, before a verb of the learnt phrasings
        ("Year serves as a direct foundation for how many concepts?", {"lesson"}),
        # a path runs in the question's order, whichever name is an everyday word
        ("Which concepts connect Path to Lesson in learning order?", {"path", "year", "lesson"}),
        # a name in ideographs ends its sentence with a dot
        ("i want to get to 机器学习. already studied Web 2.0. what remains?", {"algebra"}),
        # a one-letter name ends its sentence before a capital
        ("Aiming for R. Got Web 2.0 under control. Which topics are left, all the way down?", {"algebra"}),
    ],
)
def test_each_question_is_answered_about_the_concept_it_names(
    real_map: str, question: str, expected: set[str]
) -> None:
    """The answer set is the named concept's, whatever the graph calls its concepts."""
    assert members(real_map, question) == expected


def test_a_head_word_abstains_with_the_names_it_could_mean(real_map: str) -> None:
    """ "attention" is the head of "Attention mechanism": not a guess, a did-you-mean."""
    a = answer(real_map, "What comes before attention?")
    assert a["abstained"]
    reading = a["reading"]
    assert isinstance(reading, dict)
    offered = {d["id"] for d in reading["did_you_mean"]}
    assert "attention_mechanism" in offered


def test_a_name_mixing_scripts_is_refused_at_import_and_write(database_url: str, tmp_path: Path) -> None:
    """ "RАG" with a Cyrillic А could pass for "RAG": the bundle check and the gateway refuse it."""
    ok(database_url, "init", "--no-curriculum")
    bundle = write_bundle(tmp_path / "bundle", [*CONCEPTS, ("rag_spoof", "RАG", "")])
    checked = kg(database_url, "import", str(bundle), "--check")
    assert checked.exit_code != 0 and "confusable_name" in checked.output
    added = kg(database_url, "concept", "add", "spoof", "--name", "RАG", *GROUNDED)
    assert added.exit_code != 0 and "could pass for another name" in added.output


@pytest.mark.parametrize("control", ["\u202e", "\u2066", "\u200f", "\u061c"])
def test_a_name_holding_a_direction_control_is_refused_at_every_write(
    database_url: str, tmp_path: Path, control: str
) -> None:
    """A bidirectional-text control (U+202E reverses what follows it on screen) lets a name
    display as another: the bundle check, a pairs import, an alias and a write refuse it, naming
    the control."""
    ok(database_url, "init", "--no-curriculum")
    spoof = f"GAR{control} spoof"
    bundle = write_bundle(tmp_path / "bundle", [*CONCEPTS, ("rag_spoof", spoof, "")])
    checked = kg(database_url, "import", str(bundle), "--check")
    assert checked.exit_code != 0 and "confusable_name" in checked.output
    assert f"U+{ord(control):04X}" in checked.output
    pairs, names = tmp_path / "pairs.csv", tmp_path / "names.csv"
    pairs.write_text(f"prerequisite,concept\nArithmetic,{spoof}\n", encoding="utf-8")
    names.write_text(f"name,summary\nArithmetic,Numbers.\n{spoof},Spoof.\n", encoding="utf-8")
    paired = kg(database_url, "import", "--pairs", str(pairs), "--names", str(names), "--check")
    assert paired.exit_code != 0 and f"U+{ord(control):04X}" in paired.output
    added = kg(database_url, "concept", "add", "spoof", "--name", spoof, *GROUNDED)
    assert added.exit_code != 0 and "bidirectional-text control" in added.output
    ok(database_url, "concept", "add", "plain", "--name", "Plain", *GROUNDED)
    aliased = kg(database_url, "concept", "revise", "plain", "--alias", spoof, *GROUNDED)
    assert aliased.exit_code != 0 and f"U+{ord(control):04X}" in aliased.output


def test_search_finds_a_name_as_learners_type_it(real_map: str) -> None:
    """`kg concept search "hookes law"` puts Hooke's law first, and "c++" finds C++ before C."""
    hooke = ok(real_map, "concept", "search", "hookes law", "--format", "json")
    assert json.loads(hooke.stdout)[0]["concept_id"] == "hooke"
    cpp = ok(real_map, "concept", "search", "c++", "--format", "json")
    assert json.loads(cpp.stdout)[0]["concept_id"] == "cpp"


def test_an_everyday_name_written_twice_alike_is_one_name_twice(real_map: str) -> None:
    """ "Lesson then Path, or Path then Lesson?": both "Lesson" are the concept, so the question
    asks which of two concepts comes first, not which lessons cover Path."""
    a = answer(real_map, "Lesson then Path, or Path then Lesson?")
    assert not a["abstained"], a["abstain_reason"]
    assert a["result"]["first"] == "path"


def test_a_bracketed_name_is_quoted_whole_in_the_reading(real_map: str) -> None:
    a = answer(real_map, "What comes before Motion (physics)?")
    assert [s["words"] for s in a["reading"]["subjects"]] == ["Motion (physics)"]


def test_a_long_name_does_not_push_the_learners_own_time_away(real_map: str) -> None:
    """ "I covered <a seven-word name> last year": the learner's time, not the graph's, however
    long the name between the verb and the time words."""
    a = answer(
        real_map,
        "Self-taught. I covered Evaluating multiple integrals: change of variables last year. "
        "What comes directly after Algebra?",
    )
    assert not a["reading"].get("time"), a["reading"]
