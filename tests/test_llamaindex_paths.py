"""LlamaIndex's own retrieval and ingestion paths over SQLPropertyGraphStore, on SQLite and
PostgreSQL: the default retriever, LLMSynonymRetriever and VectorContextRetriever with a stub
model (LlamaIndex's MockLLM answering one fixed line) and embeddings, and from_documents/insert."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Document, MockEmbedding, PropertyGraphIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.indices.property_graph import LLMSynonymRetriever, VectorContextRetriever
from llama_index.core.llms import CompletionResponse, MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.vector_stores.simple import SimpleVectorStore

from control_plane.planning.graph_store import SQLPropertyGraphStore
from control_plane.understanding.names import normalise
from data_plane import ConfigurationError, GraphReader, InputError, WriteGateway
from data_plane.testing import build_graph

QUESTION = "What does RAG build on?"
RAG_TRIPLETS = [
    "agentic_rag -> builds_on -> rag",
    "llm_basics -> prerequisite -> rag",
    "rag -> builds_on -> embeddings",
    "rag -> builds_on -> vector_search",
]


class KeywordLLM(MockLLM):
    """LlamaIndex's MockLLM answering every prompt with one line, as a model asked for keywords might."""

    answer: str = "KEYWORDS: RAG^retrieval augmented generation"

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer)


class WordEmbedding(BaseEmbedding):
    """A bag of normalised words hashed into 64 dimensions: texts sharing words are near."""

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * 64
        for word in normalise(text):
            v[zlib.crc32(word.encode()) % 64] += 1.0
        return v

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


@pytest.fixture
def store(gateway: WriteGateway, reader: GraphReader) -> SQLPropertyGraphStore:
    build_graph(
        gateway,
        [
            ("rag", "Retrieval-augmented generation", ["RAG"]),
            ("embeddings", "Embeddings"),
            ("vector_search", "Vector search"),
            ("llm_basics", "LLM basics"),
            ("agentic_rag", "Agentic RAG"),
            ("tokenization", "Tokenization"),
        ],
        [
            ("rag", "embeddings", "builds_on"),
            ("rag", "vector_search", "builds_on"),
            ("llm_basics", "rag", "prerequisite"),
            ("agentic_rag", "rag", "builds_on"),
            ("tokenization", "llm_basics", "prerequisite"),
        ],
    )
    return SQLPropertyGraphStore(reader, gateway=gateway)


def _texts(nodes: list[Any]) -> list[str]:
    return sorted(n.node.get_content() for n in nodes)


def test_llm_synonym_retriever_returns_rags_triplets(store: SQLPropertyGraphStore) -> None:
    """The model's capitalised keywords ("Keywords: rag", "Retrieval augmented generation") reach RAG's triplets."""
    retriever = LLMSynonymRetriever(store, llm=KeywordLLM(), include_text=False)
    assert _texts(retriever.retrieve(QUESTION)) == RAG_TRIPLETS


@pytest.mark.parametrize("include_text", [False, True])
def test_default_retriever_returns_rags_triplets(store: SQLPropertyGraphStore, include_text: bool) -> None:
    """index.as_retriever() over an index without embeddings returns RAG's triplets, with or
    without source text (a curriculum has no source chunks to add)."""
    index = PropertyGraphIndex.from_existing(
        property_graph_store=store,
        llm=KeywordLLM(),
        embed_model=MockEmbedding(embed_dim=8),
        embed_kg_nodes=False,
    )
    assert _texts(index.as_retriever(include_text=include_text).retrieve(QUESTION)) == RAG_TRIPLETS


def test_default_retriever_without_vectors_says_how_to_make_them(store: SQLPropertyGraphStore) -> None:
    """An index that embeds nodes but has no concept vectors refuses with the call that makes them."""
    index = PropertyGraphIndex.from_existing(
        property_graph_store=store, llm=KeywordLLM(), embed_model=MockEmbedding(embed_dim=8)
    )
    with pytest.raises(ConfigurationError, match=r"embed_concepts\(embed_model\).*embed_kg_nodes=False"):
        index.as_retriever(include_text=False).retrieve(QUESTION)


def test_default_retriever_with_embedded_concepts_keeps_rags_triplets(store: SQLPropertyGraphStore) -> None:
    """Once the concepts are embedded, the default retriever (synonyms and vectors) returns RAG's triplets too."""
    embed = MockEmbedding(embed_dim=8)
    store.embed_concepts(embed)
    index = PropertyGraphIndex.from_existing(property_graph_store=store, llm=KeywordLLM(), embed_model=embed)
    assert set(RAG_TRIPLETS) <= set(_texts(index.as_retriever(include_text=False).retrieve(QUESTION)))


def test_vector_context_retriever_finds_concepts_by_their_words(store: SQLPropertyGraphStore) -> None:
    """VectorContextRetriever over the store's vectors finds the concept whose text is nearest the query."""
    embed = WordEmbedding()
    store.embed_concepts(embed)
    retriever = VectorContextRetriever(store, embed_model=embed, similarity_top_k=1, include_text=False)
    assert _texts(retriever.retrieve("tokenization")) == ["tokenization -> prerequisite -> llm_basics"]


def test_a_store_given_filled_vectors_searches_them(
    store: SQLPropertyGraphStore, reader: GraphReader
) -> None:
    """Vectors embedded once (say, by another process) serve a store built with them, through the default retriever."""
    embed = WordEmbedding()
    vectors = store.embed_concepts(embed, SimpleVectorStore())
    other = SQLPropertyGraphStore(reader, vector_store=vectors)
    index = PropertyGraphIndex.from_existing(property_graph_store=other, llm=KeywordLLM(), embed_model=embed)
    texts = _texts(index.as_retriever(include_text=False, similarity_top_k=1).retrieve("tokenization"))
    assert "tokenization -> prerequisite -> llm_basics" in texts and set(RAG_TRIPLETS) <= set(texts)


def test_a_vector_store_given_only_to_the_index_is_pointed_at_the_store(
    store: SQLPropertyGraphStore, reader: GraphReader
) -> None:
    """LlamaIndex asks the store for vectors, so a vector store given only to the index is refused with where it belongs."""
    embed = WordEmbedding()
    vectors = SQLPropertyGraphStore(reader).embed_concepts(embed, SimpleVectorStore())
    index = PropertyGraphIndex.from_existing(
        property_graph_store=store, vector_store=vectors, llm=KeywordLLM(), embed_model=embed
    )
    with pytest.raises(
        ConfigurationError,
        match=r"not PropertyGraphIndex's vector_store.*from_url\(url, vector_store=\.\.\.\)",
    ):
        index.as_retriever(include_text=False).retrieve("tokenization")


def test_embedding_again_replaces_the_vectors(store: SQLPropertyGraphStore, gateway: WriteGateway) -> None:
    """Embedding after a change keeps one vector per concept (ids are concept ids) and adds the new one."""
    embed = WordEmbedding()
    vectors = store.embed_concepts(embed)
    build_graph(gateway, [("chunking", "Chunking")])
    assert store.embed_concepts(embed, vectors) is vectors
    assert isinstance(vectors, SimpleVectorStore)
    assert sorted(vectors.data.embedding_dict) == [
        "agentic_rag", "chunking", "embeddings", "llm_basics", "rag", "tokenization", "vector_search",
    ]  # fmt: skip


@pytest.mark.parametrize("how", ["from_documents", "insert"])
def test_documents_are_refused_before_anything_is_written(
    store: SQLPropertyGraphStore, reader: GraphReader, how: str
) -> None:
    """from_documents and insert end in one error saying what to do instead, and write nothing."""
    before = reader.snapshot()
    doc = Document(text="RAG retrieves documents and puts them in the prompt.")
    kwargs: dict[str, Any] = {
        "llm": KeywordLLM(),
        "embed_model": MockEmbedding(embed_dim=8),
        "use_async": False,
    }
    with pytest.raises(
        InputError,
        match=r"not documents or text chunks: build the index with PropertyGraphIndex\.from_existing",
    ):
        if how == "from_documents":
            PropertyGraphIndex.from_documents([doc], property_graph_store=store, **kwargs)
        else:
            PropertyGraphIndex.from_existing(property_graph_store=store, **kwargs).insert(doc)
    after = reader.snapshot()
    assert (after.concepts, after.edges) == (before.concepts, before.edges)


def test_deleting_a_document_is_refused(store: SQLPropertyGraphStore) -> None:
    """Deleting LlamaIndex nodes by document is refused: no document is kept, and no concept is touched."""
    with pytest.raises(InputError, match="not documents or text chunks"):
        store.delete_llama_nodes(ref_doc_ids=["rag"])
    assert [n.id for n in store.get(ids=["rag"])] == ["rag"]


def test_the_docs_example_prints_what_the_docs_show(initialised: str) -> None:
    """docs/llamaindex.md shows docs/examples/llamaindex_retrievers.py verbatim, and the output it prints on the curriculum."""
    root = Path(__file__).resolve().parent.parent
    script = root / "docs" / "examples" / "llamaindex_retrievers.py"
    doc = (root / "docs" / "llamaindex.md").read_text(encoding="utf-8")
    assert f"```python\n{script.read_text(encoding='utf-8')}```" in doc
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, str(script), initialised], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"Output:\n\n```text\n{done.stdout}```" in doc
