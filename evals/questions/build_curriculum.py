"""Build ``curriculum.jsonl``: hand-written learner questions with gold answers computed from the
bundled curriculum (``data_plane/curriculum``) by ``evals.gold`` (networkx, independent of the
backend).

Run from the repository root::

    python evals/questions/build_curriculum.py            # rewrites evals/questions/curriculum.jsonl
    python evals/questions/build_curriculum.py --check    # fails if the committed file is stale

Each entry below is (type, phrasing, gold spec, as_of). The phrasing is written by hand; the gold
is never typed in. A spec whose gold is empty, too large (> MAX_GOLD concepts) or, for abstention
questions, actually answerable, stops the build: fix the question, never the gold.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from data_plane.clock import parse_time  # noqa: E402
from evals import gold  # noqa: E402
from evals.questions import Question, dump_questions  # noqa: E402

BUNDLE = ROOT / "data_plane" / "curriculum"
OUT = Path(__file__).with_name("curriculum.jsonl")
MAX_GOLD = 15
PAST = "2025-01-01"

Spec = tuple[str, ...]

# (type, phrasing, spec, as_of)
QUESTIONS: list[tuple[str, str, Spec, str | None]] = [
    # -- direct prerequisites (prerequisite edges into X, as stored) ------------------------------
    (
        "prerequisites",
        "What are the prerequisites of agent orchestration?",
        ("prereq", "agent_orchestration"),
        None,
    ),
    ("prerequisites", "Which concepts are listed as direct prerequisites for RAG?", ("prereq", "rag"), None),
    ("prerequisites", "What is the prerequisite of backprop?", ("prereq", "backpropagation"), None),
    (
        "prerequisites",
        "Which topics are prerequisites for gradient descent?",
        ("prereq", "gradient_descent"),
        None,
    ),
    (
        "prerequisites",
        "Before chain-of-thought prompting, which prompting styles are prerequisites?",
        ("prereq", "chain_of_thought"),
        None,
    ),
    ("prerequisites", "Name the prerequisites for vector databases.", ("prereq", "vector_databases"), None),
    ("prerequisites", "Loss functions: what are their prerequisites?", ("prereq", "loss_functions"), None),
    (
        "prerequisites",
        "Which concepts are marked as prerequisites of large language model fundamentals?",
        ("prereq", "llm_basics"),
        None,
    ),
    (
        "prerequisites",
        "I'm about to start prompting fundamentals. What are its prerequisites?",
        ("prereq", "prompting_fundamentals"),
        None,
    ),
    ("prerequisites", "Which prerequisites does hybrid search have?", ("prereq", "hybrid_search"), None),
    (
        "prerequisites",
        "What is the prerequisite listed for speculative decoding?",
        ("prereq", "speculative_decoding"),
        None,
    ),
    # -- everything needed before X (transitive) -------------------------------------------------
    (
        "needed_before",
        "What do I need to learn before the transformer architecture?",
        ("before", "transformer_architecture"),
        None,
    ),
    (
        "needed_before",
        "Everything I should master before I can tackle mixture of experts (MoE)?",
        ("before", "mixture_of_experts"),
        None,
    ),
    (
        "needed_before",
        "I want to understand backpropagation. What has to come first, all the way down?",
        ("before", "backpropagation"),
        None,
    ),
    ("needed_before", "Which topics lead up to rotary position embeddings (RoPE)?", ("before", "rope"), None),
    (
        "needed_before",
        "What's the full list of things to study before adaptive optimizers like Adam?",
        ("before", "optimizers"),
        None,
    ),
    ("needed_before", "Before I read about HNSW, what background do I need?", ("before", "hnsw"), None),
    ("needed_before", "What should I know before tackling the KV cache?", ("before", "kv_cache"), None),
    (
        "needed_before",
        "Give me all the prerequisites, direct and indirect, for hybrid search.",
        ("before", "hybrid_search"),
        None,
    ),
    (
        "needed_before",
        "What is the whole learning path that ends at cross-encoders?",
        ("before", "cross_encoders"),
        None,
    ),
    (
        "needed_before",
        "What does someone need to have covered before they study regularization?",
        ("before", "regularization"),
        None,
    ),
    (
        "needed_before",
        "Which concepts must be in place before mixed-precision training?",
        ("before", "mixed_precision_training"),
        None,
    ),
    (
        "needed_before",
        "Before hallucination makes sense, what should a learner have covered?",
        ("before", "hallucination"),
        None,
    ),
    (
        "needed_before",
        "What should I study, transitively, before product quantization?",
        ("before", "product_quantization"),
        None,
    ),
    (
        "needed_before",
        "I'm new to ML. What do I need before cross-entropy loss?",
        ("before", "cross_entropy_loss"),
        None,
    ),
    (
        "needed_before",
        "What groundwork is needed for semantic caching?",
        ("before", "semantic_caching"),
        None,
    ),
    ("needed_before", "What comes before perplexity in the curriculum?", ("before", "perplexity"), None),
    (
        "needed_before",
        "What do I need under my belt before GPU autoscaling?",
        ("before", "autoscaling"),
        None,
    ),
    # -- what builds on X / what X builds on -------------------------------------------------------
    ("builds_on", "What builds on embeddings?", ("builtby", "embeddings"), None),
    ("builds_on", "Which concepts build directly on the KV cache?", ("builtby", "kv_cache"), None),
    ("builds_on", "What topics build on self-attention?", ("builtby", "self_attention"), None),
    ("builds_on", "Once I know RAG, what builds on it?", ("builtby", "rag"), None),
    ("builds_on", "Which ideas are built on top of JSON Schema?", ("builtby", "json_schema"), None),
    ("builds_on", "What does retrieval-augmented generation build on?", ("found", "rag"), None),
    ("builds_on", "Agent memory builds on which concepts?", ("found", "agent_memory"), None),
    ("builds_on", "What is LoRA built on?", ("found", "lora"), None),
    ("builds_on", "Which concepts build on the transformer?", ("builtby", "transformer_architecture"), None),
    ("builds_on", "What builds on quantization?", ("builtby", "quantization"), None),
    ("builds_on", "What foundations does an AI agent build on?", ("found", "ai_agent"), None),
    # -- part-of ------------------------------------------------------------------------------------
    ("part_of", "What are the parts of a transformer?", ("parts", "transformer_architecture"), None),
    ("part_of", "What is agent orchestration part of?", ("wholes", "agent_orchestration"), None),
    ("part_of", "What components make up MLOps?", ("parts", "mlops"), None),
    ("part_of", "Which metrics belong to retrieval metrics?", ("parts", "retrieval_metrics"), None),
    ("part_of", "What pieces make up a RAG pipeline architecture?", ("parts", "rag_pipeline"), None),
    ("part_of", "Which larger topic is FlashAttention part of?", ("wholes", "flash_attention"), None),
    (
        "part_of",
        "What does an LLM inference engine like vLLM consist of?",
        ("parts", "inference_engines"),
        None,
    ),
    ("part_of", "What are the components of AI safety?", ("parts", "ai_safety"), None),
    ("part_of", "Where does BM25 sit: what is it part of?", ("wholes", "bm25"), None),
    ("part_of", "What does the sampling strategies topic include?", ("parts", "sampling_strategies"), None),
    # -- contrasts ----------------------------------------------------------------------------------
    ("contrasts", "What does RAG contrast with?", ("contrasts", "rag"), None),
    ("contrasts", "What is BPE usually contrasted with?", ("contrasts", "bpe"), None),
    ("contrasts", "What is the alternative to LoRA?", ("contrasts", "lora"), None),
    ("contrasts", "Fine-tuning is contrasted with which alternatives?", ("contrasts", "fine_tuning"), None),
    (
        "contrasts",
        "What is the opposite of supervised learning here?",
        ("contrasts", "supervised_learning"),
        None,
    ),
    ("contrasts", "Which index type is HNSW contrasted with?", ("contrasts", "hnsw"), None),
    ("contrasts", "What contrasts with LLM-as-a-judge?", ("contrasts", "llm_as_judge"), None),
    ("contrasts", "What is vector search contrasted with?", ("contrasts", "vector_search"), None),
    ("contrasts", "RLHF versus what: which method does it contrast with?", ("contrasts", "rlhf"), None),
    # -- how X leads to Y (the unique shortest "before" path, both ends included) -------------------
    ("path", "How does linear algebra lead to QLoRA?", ("path", "linear_algebra_for_ml", "qlora"), None),
    ("path", "How does softmax lead to the KV cache?", ("path", "softmax", "kv_cache"), None),
    ("path", "Trace the path from embeddings to HNSW.", ("path", "embeddings", "hnsw"), None),
    ("path", "How do I get from BM25 to RAG?", ("path", "bm25", "rag"), None),
    (
        "path",
        "How does chain-of-thought prompting lead to self-reflection?",
        ("path", "chain_of_thought", "reflection"),
        None,
    ),
    (
        "path",
        "Show me how GPU computing leads to model serving.",
        ("path", "gpu_computing", "model_serving"),
        None,
    ),
    (
        "path",
        "What chain of concepts connects neural networks to LSTM?",
        ("path", "neural_networks", "lstm"),
        None,
    ),
    ("path", "How does the inverted index lead to BM25?", ("path", "inverted_index", "bm25"), None),
    (
        "path",
        "How does the transformer architecture lead to agent orchestration?",
        ("path", "transformer_architecture", "agent_orchestration"),
        None,
    ),
    ("path", "How does next-token prediction lead to DPO?", ("path", "next_token_prediction", "dpo"), None),
    # -- combined --------------------------------------------------------------------------------------
    (
        "combined",
        "What must a learner master before agent orchestration, and which of those concepts does RAG build on?",
        ("combined", "agent_orchestration", "rag"),
        None,
    ),
    (
        "combined",
        "Of everything needed before hybrid search, which does RAG build on?",
        ("combined", "hybrid_search", "rag"),
        None,
    ),
    (
        "combined",
        "Which concepts needed before agent frameworks are ones that agent memory builds on?",
        ("combined", "agent_frameworks", "agent_memory"),
        None,
    ),
    (
        "combined",
        "What do the transformer architecture and RNNs both require first?",
        ("both", "transformer_architecture", "rnn"),
        None,
    ),
    (
        "combined",
        "Which foundations of the transformer are also needed before the KV cache?",
        ("combined", "kv_cache", "transformer_architecture"),
        None,
    ),
    (
        "combined",
        "What must I know before both reranking and sentence embeddings?",
        ("both", "reranking", "sentence_embeddings"),
        None,
    ),
    # -- unanswerable: unknown concept, or no supporting path --------------------------------------------
    ("unanswerable", "What must I learn before quantum error correction?", ("unknown",), None),
    ("unanswerable", "What builds on blockchain consensus protocols?", ("unknown",), None),
    ("unanswerable", "What are the prerequisites for sourdough baking?", ("unknown",), None),
    ("unanswerable", "What is the Riemann hypothesis part of?", ("unknown",), None),
    ("unanswerable", "What contrasts with photosynthesis?", ("unknown",), None),
    ("unanswerable", "How does BPE lead to reranking?", ("nopath", "bpe", "reranking"), None),
    ("unanswerable", "How does top-k sampling lead to HNSW?", ("nopath", "top_k_sampling", "hnsw"), None),
    (
        "unanswerable",
        "How does data versioning lead to self-attention?",
        ("nopath", "data_versioning", "self_attention"),
        None,
    ),
    ("unanswerable", "How do graph databases lead to LoRA?", ("nopath", "graph_databases", "lora"), None),
    ("unanswerable", "How does nDCG lead to the KV cache?", ("nopath", "ndcg", "kv_cache"), None),
    # -- temporal: as of 2025-01-01 (before the 2025-06-01 revision) versus now ---------------------------
    ("temporal", "As of January 2025, what were the prerequisites of RAG?", ("prereq", "rag"), PAST),
    ("temporal", "Back on 1 January 2025, what did RAG build on?", ("found", "rag"), PAST),
    (
        "temporal",
        "What were the prerequisites of the transformer architecture at the start of 2025?",
        ("prereq", "transformer_architecture"),
        PAST,
    ),
    (
        "temporal",
        "What are the prerequisites of the transformer architecture today?",
        ("prereq", "transformer_architecture"),
        None,
    ),
    (
        "temporal",
        "As of 2025-01-01, what was listed as a prerequisite for embeddings?",
        ("prereq", "embeddings"),
        PAST,
    ),
    (
        "temporal",
        "In early 2025, which concept was a prerequisite of the attention mechanism?",
        ("prereq", "attention_mechanism"),
        PAST,
    ),
    ("temporal", "As of 2025-01-01, what were the prerequisites of DPO?", ("prereq", "dpo"), PAST),
    (
        "temporal",
        "What were the prerequisites for LLM evaluation as of January 2025?",
        ("prereq", "llm_evaluation"),
        PAST,
    ),
    ("temporal", "What are the prerequisites for LLM evaluation now?", ("prereq", "llm_evaluation"), None),
    ("temporal", "As of 1 January 2025, what built on BM25?", ("builtby", "bm25"), PAST),
    ("temporal", "What builds on BM25 today?", ("builtby", "bm25"), None),
    (
        "temporal",
        "As of 2025-01-01, what did I need before the attention mechanism, all the way down?",
        ("before", "attention_mechanism"),
        PAST,
    ),
    ("temporal", "What does the Model Context Protocol (MCP) build on?", ("found", "mcp"), None),
    (
        "temporal",
        "As of January 2025, what did the Model Context Protocol (MCP) build on?",
        ("unknown",),
        PAST,
    ),
    ("temporal", "As of 1 January 2025, what built on hybrid search?", ("unknown",), PAST),
]

_ONE = {
    "prereq": gold.direct_prerequisites,
    "before": gold.needed_before,
    "builtby": gold.builds_on_x,
    "found": gold.foundations,
    "parts": gold.parts,
    "wholes": gold.wholes,
    "contrasts": gold.contrasts,
}


def compute_gold(view: gold.GraphView, spec: Spec) -> tuple[list[str], bool]:
    """The gold concept ids (sorted) and whether the question must be abstained on."""
    kind, *args = spec
    for a in args:
        if a not in view.concepts and kind != "unknown":
            raise ValueError(f"{spec}: {a!r} is not a concept at this time")
    if kind == "unknown":
        return [], True
    if kind == "nopath":
        g = gold.before_graph(view)
        if nx.has_path(g, args[0], args[1]) or nx.has_path(g, args[1], args[0]):
            raise ValueError(f"{spec}: there is a path; this question is answerable")
        return [], True
    if kind in _ONE:
        found = _ONE[kind](view, args[0])
    elif kind == "path":
        path = gold.unique_path(view, args[0], args[1])
        if path is None:
            raise ValueError(f"{spec}: no unique shortest path")
        found = set(path)
    elif kind == "combined":
        found = gold.needed_before(view, args[0]) & gold.foundations(view, args[1])
    elif kind == "both":
        found = gold.needed_before(view, args[0]) & gold.needed_before(view, args[1])
    else:
        raise ValueError(f"unknown spec kind {kind!r}")
    return sorted(found), False


def build(bundle: Path = BUNDLE) -> list[Question]:
    views: dict[str | None, gold.GraphView] = {}
    out: list[Question] = []
    for n, (qtype, text, spec, as_of) in enumerate(QUESTIONS, start=1):
        if as_of not in views:
            at: datetime | None = None if as_of is None else parse_time(as_of)
            views[as_of] = gold.load_bundle_view(bundle, at=at)
        concepts, abstain = compute_gold(views[as_of], spec)
        if not abstain and not 0 < len(concepts) <= MAX_GOLD:
            raise ValueError(f"question {n} ({text!r}): gold has {len(concepts)} concepts")
        out.append(Question(f"c{n:03d}", text, qtype, tuple(concepts), abstain, as_of))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file differs")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    questions = build()
    if args.check:
        tmp = args.out.with_suffix(".check.jsonl")
        dump_questions(questions, tmp)
        same = tmp.read_text() == args.out.read_text()
        tmp.unlink()
        print("up to date" if same else f"{args.out} is stale: rerun build_curriculum.py")
        return 0 if same else 1
    dump_questions(questions, args.out)
    print(f"wrote {len(questions)} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
