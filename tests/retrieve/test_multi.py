from convrag.embeddings import Embedder
from convrag.retrieve.dense import DenseRetriever
from convrag.retrieve.multi import CollectionSearch, SharedQueryEmbedder, open_collections, search_collections
from tests.helpers import Failing, Slow


def test_one_embedding_per_model_and_attribution(tiny_collection, embedder: Embedder):
    shared = SharedQueryEmbedder(embedder)
    searches = [CollectionSearch(name, DenseRetriever(tiny_collection, shared), shared, k=3) for name in ("a", "b", "c")]
    report = search_collections(searches, ["passport renewal fee", "cardinals stadium"])
    assert report.embeddings_computed == {"all-MiniLM-L6-v2": 2} and shared.computed == 2
    assert set(report.results) == {"a", "b", "c"} and not report.failures
    first = report.results["b"][0][0]
    assert first.collection == "b" and first.passage_id == "p2" and first.rank == 1 and first.document_id == "p2"


def test_failed_and_timed_out_collections_are_reported_and_the_others_answer(tiny_collection):
    searches = [
        CollectionSearch("good", open_collections({"good": tiny_collection}, "bm25")[0].retriever, None, k=2),
        CollectionSearch("broken", Failing()),
        CollectionSearch("slow", Slow()),
    ]
    report = search_collections(searches, ["passport"], timeout_s=1.0)
    assert list(report.results) == ["good"] and report.results["good"][0][0].passage_id == "p2"
    assert report.failures["broken"] == "RuntimeError: index file is corrupt"
    assert report.failures["slow"] == "timed out after 1 s"


def test_routing_evidence_reuses_the_query_vectors_of_the_search(tiny_collection):
    """Routing scores each collection with the query vectors the search already computed: one
    embedding per query and model, however many collections are searched and routed."""
    searches = open_collections({"a": tiny_collection, "b": tiny_collection}, "hybrid")
    shared = searches[0].embedder
    assert shared is not None and searches[1].embedder is shared
    queries = ["passport renewal fee", "cardinals stadium"]
    search_collections(searches, queries)
    computed = shared.computed
    assert computed == 2
    evidence = [c.evidence(queries) for c in searches]
    assert all(e is not None and len(e) == 2 for e in evidence) and shared.computed == computed
