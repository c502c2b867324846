"""LlamaIndex's retrievers over the curriculum graph, as docs/llamaindex.md shows them.

    kg --db sqlite:///kg.sqlite3 init
    python docs/examples/llamaindex_retrievers.py sqlite:///kg.sqlite3

The model and the embeddings are stand-ins, so the output is the same on every machine: put a real
LLM (``llama_index.llms.deepseek.DeepSeek``, ...) and a real embedding model in their place.
"""

import sys
import zlib
from typing import Any

from llama_index.core import PropertyGraphIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.indices.property_graph import LLMSynonymRetriever, VectorContextRetriever
from llama_index.core.llms import CompletionResponse, MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback

from control_plane.planning.graph_store import SeedRetriever, SQLPropertyGraphStore


class KeywordLLM(MockLLM):
    """Stands in for a model asked for keywords: it answers as one does."""

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="KEYWORDS: RAG^retrieval augmented generation")


class WordEmbedding(BaseEmbedding):
    """Stands in for an embedding model: a bag of lowercase words hashed into 64 dimensions."""

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * 64
        for word in text.lower().replace(",", " ").replace(":", " ").split():
            v[zlib.crc32(word.encode()) % 64] += 1.0
        return v

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


def show(title: str, nodes: list[Any]) -> None:
    print(f"== {title}: {len(nodes)}")
    for n in nodes:
        print(n.node.get_content())


store = SQLPropertyGraphStore.from_url(sys.argv[1])
llm, embed = KeywordLLM(), WordEmbedding()

# Names as LlamaIndex writes them ("Rag", "Retrieval augmented generation") are read as questions are.
print([node.id for node in store.get(ids=["Rag", "Retrieval augmented generation", "Embeddings"])])

synonyms = LLMSynonymRetriever(store, llm=llm, include_text=False)
show("LLMSynonymRetriever", synonyms.retrieve("What does RAG build on?"))

index = PropertyGraphIndex.from_existing(property_graph_store=store, llm=llm, embed_model=embed)
try:
    index.as_retriever(include_text=False).retrieve("What does RAG build on?")
except Exception as exc:  # the concepts have no vectors yet
    print(f"{type(exc).__name__}: {exc}")

store.embed_concepts(embed)  # once per process (again after the graph changed)
vectors = VectorContextRetriever(store, embed_model=embed, similarity_top_k=1, include_text=False)
show("VectorContextRetriever", vectors.retrieve("document chunking"))
everything = index.as_retriever(include_text=False, similarity_top_k=1).retrieve("What does RAG build on?")
print(f"== default retriever (synonyms and vectors): {len(everything)}")

show(
    "SeedRetriever",
    index.as_retriever(sub_retrievers=[SeedRetriever(store)]).retrieve("What does RAG build on?"),
)

rag = store.get(ids=["RAG"])
for depth in (1, 2, 3):
    triplets = store.get_rel_map(rag, depth=depth, limit=1000)
    concepts = {node.id for s, _, t in triplets for node in (s, t)}
    print(f"rel map depth {depth}: {len(triplets)} triplets, {len(concepts)} concepts")
store.close()
