"""The compact closure prompt: a 100-concept closure in layered lists with edge ids, small enough.

Tokens are counted with cl100k_base (OpenAI's tokenizer, shipped with LlamaIndex for offline use)
as an approximation of DeepSeek's own tokenizer, which is not available offline.
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime
from typing import Any

import httpx
from fake_deepseek import completion
from llama_index.core.utils import get_tokenizer

from control_plane.evidence import EvidenceGraph
from control_plane.learning_order import needs_from_edges
from control_plane.settings import LLMSettings, Secret
from control_plane.synthesizers.base import Focus
from control_plane.synthesizers.deepseek import DeepSeekSynthesizer
from control_plane.synthesizers.prompts import (
    BOUNDARY_LISTED,
    build_closure_messages,
    build_messages,
    closure_evidence,
)
from control_plane.testing import make_concept, make_request
from data_plane.records import Edge, Grounding, Stamp

T0 = datetime(2025, 1, 1, tzinfo=UTC)
WORDS = [
    "attention", "gradient", "retrieval", "embedding", "token", "vector", "agent", "memory", "prompt",
    "decoding", "sampling", "cache", "index", "graph", "loss", "optimizer", "transformer", "policy",
]  # fmt: skip


def closure_of_100(seed: int = 3) -> EvidenceGraph:
    """A needed-before closure of 100 concepts below one seed, ~1.6 learning edges per concept,
    curriculum-like slugs and realistic (five-digit) edge version ids."""
    rnd = random.Random(seed)
    ids: list[str] = []
    while len(ids) < 101:
        slug = f"{rnd.choice(WORDS)}_{rnd.choice(WORDS)}"
        if slug not in ids:
            ids.append(slug)
    ev = EvidenceGraph(seeds=(ids[0],))
    for cid in ids:
        ev.add_concept(make_concept(cid, summary=f"What {cid.replace('_', ' ')} is and why it matters."))
    vid = 40_000
    for i in range(1, 101):
        for j in sorted(set(rnd.sample(range(i), min(i, rnd.choice([1, 1, 2, 2, 3]))))):
            later, earlier = ids[j], ids[i]  # earlier is needed before later; ids[0] is the seed
            vid += rnd.randint(1, 40)
            relation = rnd.choice(["prerequisite", "builds_on"])
            s, t = (earlier, later) if relation == "prerequisite" else (later, earlier)
            g = Grounding(
                rnd.choice([0.95, 0.9, 0.6]), "curriculum team reason " * 5, "curriculum", {"doc": "x"}
            )
            ev.add_edge(Edge(s, t, relation, g, Stamp(vid, "assert", T0, None, T0, None, None)))
    return ev


def _tokens(messages: list[dict[str, str]]) -> int:
    tokenize = get_tokenizer()  # cl100k_base, from LlamaIndex's bundled cache (no network)
    return sum(len(tokenize(m["content"])) + 4 for m in messages)


def test_a_100_concept_closure_prompt_stays_under_2000_tokens() -> None:
    """The compact prompt for a 100-concept closure is at most 2,000 tokens (measured: 1,948),
    under a third of the full form's (5,878)."""
    ev = closure_of_100()
    request = make_request(
        f"What must a learner master before {ev.seeds[0].replace('_', ' ')}?",
        ev,
        focus=Focus(("prerequisite", "builds_on")),
    )
    compact = _tokens(build_closure_messages(request))
    full = _tokens(build_messages(request))
    assert len(ev.concepts) == 101 and len(ev.edges) >= 150
    assert compact <= 2000, compact
    assert compact * 3 <= full, (compact, full)


def test_the_compact_prompt_lists_every_unexpanded_concept_up_to_its_bound() -> None:
    """A claim is complete only when none it depends on is unexpanded, so the model is shown each
    unexpanded concept (the one-hop rounds' 20 or so in full); past the bound the rest is counted."""
    ev = closure_of_100()
    ids = sorted(ev.concepts)

    def boundary(unexpanded: list[str]) -> str:
        user = build_closure_messages(make_request("What must I master first?", ev, unexpanded=unexpanded))[1]
        return next(line for line in user["content"].splitlines() if "not expanded yet" in line)

    twenty = boundary(ids[:20])
    assert all(c in twenty for c in ids[:20]) and "more" not in twenty.split("): ", 1)[1]
    past = boundary(ids[: BOUNDARY_LISTED + 1])
    assert (
        past.endswith(" and 1 more") and ids[BOUNDARY_LISTED - 1] in past and ids[BOUNDARY_LISTED] not in past
    )


def test_compact_evidence_keeps_every_id_in_learning_order() -> None:
    """Every concept id and edge id is in the compact form, and each concept's needs sit in earlier layers."""
    ev = closure_of_100(seed=5)
    text = closure_evidence(ev)
    body = "\n".join(line for line in text.splitlines() if re.match(r"L\d+: ", line))
    assert set(re.findall(r"[=/](e\d+)", body)) == set(ev.edges)
    layer_of: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"L(\d+): (.*)", line)
        if m:
            for item in m.group(2).split("; "):
                layer_of[item.split(":")[0]] = int(m.group(1))
    needed = set(re.findall(r"([a-z_]+)[=/]e\d+", body))
    for c in needed - set(layer_of):
        layer_of[c] = 0  # listed only as a need: layer 0
    assert set(layer_of) == set(ev.concepts)
    for later, earlier in needs_from_edges(
        (e.source_id, e.target_id, e.relation) for e in ev.edges.values()
    ).items():
        assert all(layer_of[x] < layer_of[later] for x in earlier)


def test_weak_edges_and_other_relations_are_kept() -> None:
    """Low-confidence learning edges show their confidence; non-learning edges are listed apart."""
    ev = EvidenceGraph(seeds=("b",))
    for c in ("a", "b", "c"):
        ev.add_concept(make_concept(c))
    g = Grounding(0.5, "weak", "t", {"x": 1})
    ev.add_edge(Edge("a", "b", "prerequisite", g, Stamp(7, "assert", T0, None, T0, None, None)))
    ev.add_edge(Edge("c", "b", "part_of", g, Stamp(8, "assert", T0, None, T0, None, None)))
    text = closure_evidence(ev)
    assert "b: a=e7?" in text and "OTHER EDGES:\ne8 c>part_of>b" in text


def test_deepseek_sends_the_compact_form_for_a_big_closure_only() -> None:
    """Over the wire, a 100-concept closure goes in the compact form and a small evidence graph in
    the full form."""
    sent: list[dict[str, Any]] = []
    reply = {"claim": {"members": [], "complete": False}, "confidence": 0.5, "missing": "more",
             "next_focus": {"relations": [], "concept_ids": [], "text": ""}}  # fmt: skip

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=completion(json.dumps(reply)))

    client = httpx.Client(transport=httpx.MockTransport(handle))
    synth = DeepSeekSynthesizer(LLMSettings(api_key=Secret("sk-test-0123456789abcdef")), http_client=client)
    big = closure_of_100()
    small = EvidenceGraph(seeds=("a",))
    small.add_concept(make_concept("a"))
    for ev in (big, small):
        synth.synthesize(make_request("What comes before it?", ev, focus=Focus(("prerequisite",))))
    user = [body["messages"][-1]["content"] for body in sent]
    assert "LEARNING ORDER" in user[0] and "EDGES (edge_id" not in user[0]
    assert "LEARNING ORDER" not in user[1] and "EDGES (edge_id" in user[1]
    assert _tokens(sent[0]["messages"]) <= 2000
