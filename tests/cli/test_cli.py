import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convrag.cli.main import app
from convrag.data.layout import sample_root
from tests.helpers import TINY, GarbageServer, Served, merged_results, write_jsonl

runner = CliRunner()


def _corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", [{"_id": p.doc_id, "title": p.title, "text": p.text} for p in TINY])


def _convrag(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {"CONVRAG_HOME": str(home), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "convrag", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("command", [[], ["index"], ["search"], ["eval"], ["demo"], ["bench", "retrieval"], ["rewrite"], ["bench", "strategies"], ["eval-answers"], ["bench", "merge"], ["bench", "service"], ["bench", "strategy-latency"], ["bench", "llm"], ["compare"], ["score"], ["score-answers"], ["ask"], ["chat"], ["run-incremental"], ["serve"], ["collections"], ["delete"], ["strategies"]])
def test_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_help_keeps_the_defaults_written_in_brackets_of_words() -> None:
    # Rich reads "[default: X]" as a markup tag and drops it, so help texts write "(default: X)"
    def flat(command: str) -> str:  # the help text without its boxes and line breaks
        return " ".join(re.sub(r"[│╭╮╰╯─]", " ", runner.invoke(app, [command, "--help"]).output).split())

    assert "(default: $CONVRAG_HOME/collections)" in flat("ask")
    assert "(default: the first run)" in flat("eval") and "(default: combsum)" in flat("eval")


def test_index_then_search(tmp_path: Path) -> None:
    store = tmp_path / "store"
    result = runner.invoke(app, ["index", str(_corpus(tmp_path)), "-c", "tiny", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "6 passages, BM25 and dense (all-MiniLM-L6-v2)" in result.output
    for retriever in ("bm25", "dense", "hybrid"):
        found = runner.invoke(app, ["search", "passport renewal fee", "-c", "tiny", "--store", str(store), "-r", retriever, "-k", "2"])
        assert found.exit_code == 0, found.output
        assert found.output.splitlines()[0].startswith("1. p2")


def test_several_collections_are_searched_together_as_a_chat_searches_them(tmp_path: Path) -> None:
    """``-c a,b`` was read as one collection named "a,b", where ``ask`` and ``chat`` take several."""
    store = tmp_path / "store"
    boats = write_jsonl(tmp_path / "boats.jsonl", [{"_id": "moor", "title": "Moorings", "text": "A visitor mooring costs 30 dollars a night."}])
    for corpus, name in ((_corpus(tmp_path), "tiny"), (boats, "boats")):
        assert runner.invoke(app, ["index", str(corpus), "-c", name, "--store", str(store), "--no-dense"]).exit_code == 0
    found = runner.invoke(app, ["search", "passport renewal fee or a mooring", "-c", "tiny,boats", "--store", str(store), "-r", "bm25", "-k", "3"])
    assert found.exit_code == 0, found.output
    lines = found.output.splitlines()
    assert lines[0] == "searched tiny, boats"
    ranked = [line.split()[1] for line in lines if line[:1].isdigit()]
    assert len(ranked) == 3 and "boats/moor" in ranked and any(r.startswith("tiny/p2") for r in ranked)
    unknown = runner.invoke(app, ["search", "fee", "-c", "tiny,nope", "--store", str(store), "-r", "bm25"])
    assert unknown.exit_code != 0 and "unknown collection 'nope'" in str(unknown.exception)


def test_search_shows_ids_titles_and_text_as_written_not_as_markup(tmp_path: Path) -> None:
    # rich read "[draft]" as a style and dropped it, and "[/r/SkimThat]" (a Markdown link in 7 fiqa and 23 cloud
    # passages of MT-RAG) as a closing tag: a MarkupError traceback
    rows = [{"_id": "fees[/b]", "title": "Fees [draft]", "text": "The passport renewal fee [draft] is on [/r/SkimThat] too."},
            *({"_id": p.doc_id, "title": p.title, "text": p.text} for p in TINY)]
    store = tmp_path / "store"
    assert runner.invoke(app, ["index", str(write_jsonl(tmp_path / "c.jsonl", rows)), "-c", "odd", "--store", str(store), "--no-dense"]).exit_code == 0
    found = runner.invoke(app, ["search", "passport renewal fee draft", "-c", "odd", "--store", str(store), "-r", "bm25", "-k", "1"])
    assert found.exit_code == 0, found.output
    assert found.output.splitlines()[0].startswith("1. fees[/b]") and "Fees [draft]" in found.output
    assert "The passport renewal fee [draft] is on [/r/SkimThat] too." in found.output


def test_index_names_the_files_it_skipped_as_written(tmp_path: Path) -> None:
    docs = tmp_path / "docs [2024]"
    docs.mkdir()
    (docs / "fees [draft].md").write_text("# Fees\n\nThe Lite plan is free.\n")
    (docs / "scan [draft].pdf").write_bytes(b"%PDF-1.4 not really")
    result = runner.invoke(app, ["index", str(docs), "-c", "docs", "--store", str(tmp_path / "store"), "--no-dense"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "skipped scan [draft].pdf" in flat and "docs: 1 passage," in flat


def test_index_says_which_blank_passages_it_left_out(tmp_path: Path) -> None:
    rows = [{"_id": f"blank{i}", "text": ""} for i in range(7)] + [{"_id": "p1", "text": "The passport fee is 80 euros."}]
    corpus = write_jsonl(tmp_path / "c.jsonl", rows)
    result = runner.invoke(app, ["index", str(corpus), "-c", "blanks", "--store", str(tmp_path / "store"), "--no-dense"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "skipped 7 passage(s) with neither text nor title: blank0, blank1, blank2, blank3, blank4 and 2 more" in flat
    assert "blanks: 1 passage, BM25 only" in flat
    write_jsonl(corpus, rows[:2])
    result = _convrag("index", str(corpus), "-c", "none", "--no-dense", home=tmp_path / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "the corpus is empty (2 passage(s) with neither text nor title)" in result.stderr


def test_index_device_unavailable_is_one_line_and_keeps_the_collection(tmp_path: Path) -> None:
    """``--device`` picks where passages are embedded; a device this machine lacks is a clear error
    that leaves the collection built before untouched."""
    home = tmp_path / "home"
    corpus = _corpus(tmp_path)
    built = _convrag("index", str(corpus), "-c", "tiny", "--device", "cpu", home=home)
    assert built.returncode == 0, built.stderr
    version = (home / "collections" / "tiny" / "CURRENT").read_text()
    bad = _convrag("index", str(corpus), "-c", "tiny", "--device", "no-such-device", "--rebuild", home=home)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("error: cannot load embedding model 'all-MiniLM-L6-v2'"), bad.stderr
    assert (home / "collections" / "tiny" / "CURRENT").read_text() == version
    found = _convrag("search", "passport renewal fee", "-c", "tiny", "-r", "dense", "-k", "1", home=home)
    assert found.returncode == 0 and found.stdout.startswith("1. p2"), found.stdout + found.stderr


def test_index_documents_folder(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pricing.html").write_text("<title>Pricing</title><p>The Lite plan costs nothing per month.</p>")
    (docs / "pricing (copy).html").write_text("<title>Pricing</title><p>The Lite plan costs nothing per month.</p>")
    (docs / "setup.md").write_text("# Setup\n\nRun the installer, then log in.")
    # the page built from it (a docs site's HTML beside its source), which holds its words: indexed once
    (docs / "setup.html").write_text("<title>Setup</title><h1>Setup</h1><p>Run the installer, then log in.</p><p>Updated in 2025.</p>")
    (docs / "notes.txt").write_text("")
    (docs / "budget.numbers").write_bytes(b"PK")
    import docx

    word = docx.Document()
    word.add_heading("Support hours", 1)
    word.add_paragraph("The help desk answers from 9 to 17 on weekdays.")
    word.save(docs / "support.docx")
    store = tmp_path / "store"
    result = runner.invoke(app, ["index", str(docs), "-c", "docs", "--store", str(store), "--no-dense"])
    assert result.exit_code == 0, result.output
    assert "skipped notes.txt: no text" in result.output and "BM25 only (no dense index)" in result.output
    assert "not read 1 file(s) of other types: .numbers (1)" in " ".join(result.output.split())
    found = runner.invoke(app, ["search", "how much does the lite plan cost", "-c", "docs", "--store", str(store), "-r", "bm25"])
    assert "pricing-0-" in found.output and "Pricing" in found.output and "copy" not in found.output, found.output
    assert ("left out 1 document(s) made of other documents' passages, word for word, which are indexed: pricing (copy) "
            "(1 of its 1 passages)") in " ".join(result.output.split())
    found = runner.invoke(app, ["search", "when does the help desk answer", "-c", "docs", "--store", str(store), "-r", "bm25", "-k", "1"])
    assert "support-0-" in found.output and "Support hours" in found.output
    assert ("left out 1 file(s), each the same document as another of its name in another format, which holds its words "
            "and is indexed: setup.md (in setup.html)") in " ".join(result.output.split())
    found = runner.invoke(app, ["search", "run the installer", "-c", "docs", "--store", str(store), "-r", "bm25"])
    assert found.output.count("installer") == 1 and "1. setup-0-" in found.output, found.output


def test_eval_writes_official_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["eval", "--data", str(sample_root()), "--domains", "govt,fiqa", "-r", "bm25", "-q", "lastturn,rewrite", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "bm25+rewrite" in result.output
    lines = (out / "bm25_rewrite" / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert set(first) == {"task_id", "Collection", "contexts"}
    assert set(first["contexts"][0]) == {"document_id", "score", "text", "title"}
    assert first["Collection"] in {"mt-rag-govt-elser-512-100-20240611", "mt-rag-fiqa-beir-elser-512-100-20240501"}
    assert (out / "summary.md").exists() and (out / "bm25_lastturn" / "run.trec").exists()


@pytest.mark.parametrize(("options", "message"), [
    (["-r", "bm25", "--baseline", "bm25+lasturn"],
     "--baseline 'bm25+lasturn' is not a run of this grid; its runs are bm25+lastturn, bm25+rewrite"),  # no significance section, silently
    (["-r", "bm25", "-k", "0"], "-k must be at least 1"),  # every metric 0.0, silently
    (["-r", "bm25,foo"], "unknown retriever 'foo'"),  # said after BM25's runs and a dense index built for 'foo'
    (["-r", "bm25", "--fusion", "magic"], "unknown fusion 'magic'"),  # ignored, as no hybrid run reads it
    (["-r", "hybrid", "--windows", "best"], "unknown window scoring 'best'"),
])
def test_an_eval_grid_is_checked_before_any_index_is_built(tmp_path: Path, options: list[str], message: str) -> None:
    index_dir, out = tmp_path / "indexes", tmp_path / "out"
    result = runner.invoke(app, ["eval", "--data", str(sample_root()), "--domains", "govt", "-q", "lastturn,rewrite", *options,
                                 "--index-dir", str(index_dir), "--out", str(out)])
    assert result.exit_code != 0 and message in str(result.exception)
    assert not out.exists() and not any(index_dir.glob("*/CURRENT"))  # nothing built, nothing written


def test_errors_are_one_line_and_exit_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    unknown = _convrag("search", "anything", "-c", "nope", home=home)
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [f"error: unknown collection 'nope' in {home / 'collections'} (known: none)"]
    assert "Traceback" not in unknown.stderr

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "a", "text": "ok"}\n{"_id": "b", "te\n')
    malformed = _convrag("index", str(bad), "-c", "x", "--no-dense", home=home)
    assert malformed.returncode == 1
    assert malformed.stderr.strip().startswith(f"error: {bad}:2: invalid JSON (")
    assert len(malformed.stderr.strip().splitlines()) == 1


def test_query_limits(tmp_path: Path) -> None:
    store = tmp_path / "store"
    runner.invoke(app, ["index", str(_corpus(tmp_path)), "-c", "tiny", "--store", str(store), "--no-dense"])
    for query, message in [("   ", "the query is empty"), ("x" * 20_001, "the query is 20,001 characters; the limit is 20,000")]:
        result = runner.invoke(app, ["search", query, "-c", "tiny", "--store", str(store), "-r", "bm25"])
        assert result.exit_code != 0 and message in str(result.exception)


def test_milvus_backend_from_the_command_line(tmp_path: Path) -> None:
    uri = str(tmp_path / "milvus" / "convrag.db")
    result = runner.invoke(app, ["index", str(_corpus(tmp_path)), "-c", "tiny", "--backend", "milvus", "--milvus-uri", uri])
    assert result.exit_code == 0, result.output
    assert "6 passage(s) written, 0 removed, 6 in total" in result.output
    for retriever in ("bm25", "dense", "hybrid"):
        found = runner.invoke(app, ["search", "passport renewal fee", "-c", "tiny", "--backend", "milvus", "--milvus-uri", uri, "-r", retriever])
        assert found.exit_code == 0, found.output
        assert found.output.splitlines()[0].startswith("1. p2")
    # indexing the corpus again after an edit makes the collection hold the corpus, as the embedded backend does
    edited = [{"_id": p.doc_id, "title": p.title, "text": p.text.replace("130", "150")} for p in TINY if p.doc_id != "p3"]
    again = runner.invoke(app, ["index", str(write_jsonl(tmp_path / "corpus.jsonl", edited)), "-c", "tiny", "--backend", "milvus",
                                "--milvus-uri", uri])
    assert again.exit_code == 0, again.output
    assert "1 passage(s) written, 1 removed, 5 in total" in again.output
    found = runner.invoke(app, ["search", "passport renewal fee", "-c", "tiny", "--backend", "milvus", "--milvus-uri", uri, "-k", "6"])
    assert "150 dollars" in found.output and "130 dollars" not in found.output and "p3 " not in found.output
    unknown = runner.invoke(app, ["search", "x", "-c", "tiny", "--backend", "elastic"])
    assert "unknown backend 'elastic'" in str(unknown.exception)
    for command in ("ask", "chat"):  # answers come from Milvus collections too (a turn: tests/backends/test_milvus.py)
        question = ["How much is a passport renewal?"] if command == "ask" else []
        missing = runner.invoke(app, [command, *question, "-c", "tiny,nope", "--backend", "milvus", "--milvus-uri", uri])
        assert str(missing.exception) == f"unknown Milvus collection 'nope' at {uri} (known: tiny)"
    listed = runner.invoke(app, ["collections", "--backend", "milvus", "--milvus-uri", uri])
    assert listed.exit_code == 0 and re.search(r"tiny +5 +all-MiniLM-L6-v2", listed.output), listed.output
    deleted = runner.invoke(app, ["delete", "-c", "tiny", "-y", "--backend", "milvus", "--milvus-uri", uri])
    assert deleted.exit_code == 0 and "deleted collection tiny" in deleted.output
    assert "no collections in " in runner.invoke(app, ["collections", "--backend", "milvus", "--milvus-uri", uri]).output


def test_reading_from_a_milvus_lite_file_that_is_not_there_makes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """search, ask, chat, delete and collections opened (so made) the Milvus Lite file and its folders:
    the default ./data/convrag.db is relative to the working folder, so a search run from another
    folder, or a mistyped path, left an empty database behind and said only that no collection was there."""
    monkeypatch.chdir(tmp_path)
    typo = str(tmp_path / "typo" / "convrag.db")
    for args in (["search", "x", "-c", "tiny"], ["ask", "How much is a passport renewal?", "-c", "tiny"], ["chat", "-c", "tiny"],
                 ["delete", "-c", "tiny", "-y"]):
        result = runner.invoke(app, [*args, "--backend", "milvus", "--milvus-uri", typo])
        assert str(result.exception) == (f"no Milvus Lite file at {typo}; convrag index --backend milvus --milvus-uri {typo} "
                                         "creates it"), args
    default = runner.invoke(app, ["search", "x", "-c", "tiny", "--backend", "milvus"])
    assert str(default.exception).startswith(f"no Milvus Lite file at ./data/convrag.db ({tmp_path / 'data' / 'convrag.db'}); ")
    listed = runner.invoke(app, ["collections", "--backend", "milvus", "--milvus-uri", typo])
    assert listed.exit_code == 0 and f"no collections in {typo}: no Milvus Lite file there" in " ".join(listed.output.split())
    assert list(tmp_path.iterdir()) == []


def test_eval_on_milvus(tmp_path: Path) -> None:
    out = tmp_path / "out"
    uri = str(tmp_path / "milvus.db")
    args = ["eval", "--data", str(sample_root()), "--domains", "govt", "-r", "bm25,dense", "-q", "rewrite", "--out", str(out)]
    result = runner.invoke(app, [*args, "--backend", "milvus", "--milvus-uri", uri])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "dense_rewrite" / "metrics.json").read_text())
    # Milvus holds one vector per passage: compare with the embedded index scored the same way
    # (its default also scores the extra windows of long passages).
    embedded = runner.invoke(app, [*args[:-1], str(tmp_path / "embedded"), "--windows", "first"])
    assert embedded.exit_code == 0, embedded.output
    reference = json.loads((tmp_path / "embedded" / "dense_rewrite" / "metrics.json").read_text())
    # Same vectors, exact search on both sides: identical dense figures.
    assert metrics["metrics"]["govt"]["nDCG@10"] == pytest.approx(reference["metrics"]["govt"]["nDCG@10"], abs=1e-4)


def test_eval_with_a_strategy_writes_queries_traces_and_stats(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["eval", "--data", str(sample_root()), "--domains", "fiqa", "-r", "bm25", "-q", "", "-s", "last_turn", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    folder = out / "strategies" / "last_turn"
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    traces = [json.loads(line) for line in (folder / "traces.jsonl").read_text().splitlines()]
    assert len(queries) == len(traces) > 5
    assert all(q["text"].startswith("|user|: ") for q in queries)
    assert {"task_id", "strategy", "original_query", "final_query", "stage", "calls", "fallbacks", "latency_s"} <= set(traces[0])
    stats = json.loads((folder / "stats.json").read_text())
    assert stats["ALL"]["tasks"] == len(traces) and stats["ALL"]["llm_calls_per_turn"] == 0
    assert "Strategy decisions and cost" in (out / "summary.md").read_text()
    assert (out / "bm25_last_turn" / "results.jsonl").exists()


def test_rewrite_command_reads_a_history_file(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"role": "user", "content": "Tell me about index funds"}, {"role": "assistant", "content": "They track an index."}]))
    result = runner.invoke(app, ["rewrite", "Are they safe?", "--history", str(history), "-s", "last_turn", "--trace"])
    assert result.exit_code == 0, result.output
    assert "query: Are they safe?" in result.output and '"original_query": "Are they safe?"' in result.output
    history.write_text('[{"role": "robot", "content": "x"}]')
    bad = _convrag("rewrite", "Are they safe?", "--history", str(history), "-s", "last_turn", home=tmp_path / "home")
    assert bad.returncode == 1 and "expected user, agent or assistant" in bad.stderr


def test_eval_over_a_generation_task_file(tmp_path: Path) -> None:
    from convrag.data.layout import MTRAGData

    data = MTRAGData.discover(sample_root())
    qrels = data.qrels("govt")
    lines = []
    for task in data.tasks("govt")[:4]:
        messages = [{"speaker": m.speaker, "text": m.text} for m in task.history] + [{"speaker": "user", "text": task.question}]
        contexts = [{"document_id": d, "text": ""} for d in qrels.get(task.task_id, {})]
        lines.append({"task_id": task.task_id, "conversation_id": task.conversation_id, "turn": task.turn, "input": messages,
                      "Collection": "mt-rag-govt-elser-512-100-20240611", "contexts": contexts})
    path = write_jsonl(tmp_path / "gen.jsonl", lines)
    out = tmp_path / "out"
    result = runner.invoke(app, ["eval", "--data", str(sample_root()), "--domains", "govt", "--tasks", str(path), "-r", "bm25",
                                 "-q", "lastturn", "-s", "last_turn", "--out", str(out)])
    assert result.exit_code == 0, result.output
    scored = json.loads((out / "bm25_last_turn" / "metrics.json").read_text())
    assert scored["counts"] == {"govt": 4} and len(scored["per_query"]) == 4


def test_serve_refuses_a_public_address_without_a_key(tmp_path: Path) -> None:
    result = _convrag("serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path / "svc"), home=tmp_path / "home")
    assert result.returncode == 1 and "refusing to listen on 0.0.0.0 without an API key" in result.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("limits: {max_question_chars: many}\n")
    result = _convrag("serve", "--config", str(bad), home=tmp_path / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"invalid settings ({bad}): limits.max_question_chars: Input should be a valid integer" in result.stderr


def test_serve_refuses_a_folder_another_service_uses(tmp_path: Path) -> None:
    from filelock import FileLock

    from convrag.service.data_lock import LOCK_FILE

    (tmp_path / "svc").mkdir()
    with FileLock(tmp_path / "svc" / LOCK_FILE, timeout=0):  # held by this process, as a running service holds it
        result = _convrag("serve", "--data-dir", str(tmp_path / "svc"), "--llm", "openai:m", home=tmp_path / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"another convrag service is using {tmp_path / 'svc'}" in result.stderr


def test_serve_refuses_a_port_in_use_before_it_starts(tmp_path: Path) -> None:
    """uvicorn bound the port last: the service loaded its models, said "convrag serving on …",
    started (and began reading ahead), and only then reported the port in use."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _convrag("serve", "--port", str(port), "--data-dir", str(tmp_path / "svc"), "--llm", "openai:m", home=tmp_path / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"port {port} on 127.0.0.1 is in use (another convrag serve?); choose another with --port" in result.stderr
    assert "serving on" not in result.stdout and "startup" not in result.stderr
    result = _convrag("serve", "--port", "70000", home=tmp_path / "home")
    assert result.returncode == 1 and "invalid settings (--port): port: Input should be less than or equal to 65535" in result.stderr


def test_serve_listens_on_every_address_its_host_name_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bound by uvicorn, a name such as localhost was listened on at each of its addresses (asyncio's
    way); the port bound before the models load must be the same, or a client that resolves
    localhost to ::1 finds nothing there."""
    import socket

    from convrag.cli.service import listening

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        with socket.socket(socket.AF_INET6) as six:
            six.bind(("::1", port))
    except OSError:
        pytest.skip("this machine has no IPv6 loopback address")
    both = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)), (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: both)
    with listening("localhost", port) as sockets:
        assert sorted(s.getsockname()[0] for s in sockets) == ["127.0.0.1", "::1"]
        for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            with socket.socket(family) as client:  # listening already, before any server runs
                client.settimeout(5)
                client.connect((address, port))
        assert [s.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) for s in sockets if s.family == socket.AF_INET6] == [1]
    assert all(s.fileno() == -1 for s in sockets)  # closed with the service


def test_the_decisions_panel_shows_the_steers_and_repointed_citations(capsys) -> None:
    from convrag.cli.chat import print_decisions
    from convrag.merge.base import MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace

    trace = TurnTrace(queries=["q"], answer={"details": {"steering": {"citation_nudges": 2, "first_choice_p": 0.125}},
                                             "repointed_citations": [{"sentence": 0, "written": [2], "to": 1}]})
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), trace))
    shown = capsys.readouterr().out
    assert "2 sentence(s) made to cite, doubt (decline first) 0.12" in shown
    assert "citation re-pointed in sentence 1: [2] -> [1]" in shown
    assert "passage wording" not in shown  # no copy steer asked for
    trace.answer["details"]["steering"].update(copy_steps=30, copy_followed=24)
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), trace))
    assert "passage wording 24/30" in capsys.readouterr().out
    trace.answer["details"]["steering"].update(citation_refused=1)
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), trace))
    assert "1 written on without a number after the opener" in " ".join(capsys.readouterr().out.split())
    trace.answer.update(invalid_citations=[7])
    trace.answer["details"]["declined_in_part"] = ["The passages do not say when [it] opened."]
    trace.answer["details"]["grouped_citations"] = ["[1, 2]"]
    trace.answer["details"]["echo_retry"] = {"first": {"answer": "Not [payment] [1]."}, "sampling": {"temperature": 0.7, "seed": 0}}
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), trace))
    shown = " ".join(capsys.readouterr().out.split())
    assert "numbers cited together, each made a marker: [1, 2]" in shown
    assert "the first answer repeated the question word for word (Not [payment] [1].): written again, sampled (seed 0)" in shown
    trace.answer["details"]["repeat_retry"] = {"first": {"answer": "Calls [are] answered [1]."}, "sampling": {"seed": 0}, "again": True}
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), trace))
    shown = " ".join(capsys.readouterr().out.split())
    assert "the first answer repeated an earlier answer (Calls [are] answered [1].): written again, sampled" in shown
    assert "repeated again, and stands" in shown
    assert "citation numbers that name no passage (re-pointed or taken out): [7]" in shown
    assert "declined in part, the rest answered: The passages do not say when [it] opened." in shown
    trace.answer["details"]["steering"]["error"] = "UnicodeDecodeError: invalid start byte"
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), trace))
    assert "steered decoding failed (the model wrote on unsteered): UnicodeDecodeError" in capsys.readouterr().out


def test_the_decisions_panel_names_the_parameters_a_call_was_sent_without(capsys) -> None:
    from convrag.cli.chat import print_decisions
    from convrag.merge.base import MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace
    from convrag.strategies.base import LLMCall, Trace

    strategy = Trace("t", "full_rewrite", "How much?", calls=[LLMCall("rewrite", "1", [], "How much is it?", 9, 5, 0.1,
                                                                       sent_without=["max_tokens"])])
    answer = {"llm_call": {"sent_without": ["max_tokens", "temperature"]}, "details": {}}
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), TurnTrace(strategy=strategy, queries=["q"], answer=answer)))
    shown = " ".join(capsys.readouterr().out.split())
    assert "rewrite call sent without max_tokens: the endpoint refuses them" in shown
    assert "answer call sent without max_tokens, temperature: the endpoint refuses them" in shown


def test_the_answer_and_decisions_show_ids_and_queries_as_written(capsys) -> None:
    from convrag.cli.chat import print_answer, print_decisions
    from convrag.generate.citations import Citation
    from convrag.merge.base import Dropped, MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace

    kept = merged_results(["The fee is 80 euros."])
    kept[0] = dataclasses.replace(kept[0], hit=kept[0].hit._replace(passage_id="fees [draft]#0"))
    dropped = [Dropped(kept[0].hit._replace(passage_id="old[/b]#1"), "passages", "beyond the 5 passages allowed")]
    trace = TurnTrace(queries=["what does [/x] cost?"], merge=MergeOutcome(kept, dropped), answer={})
    result = PipelineResult("The fee is 80 euros [1].", [Citation(1, "c0", "fees [draft]#0", "fees [draft]", "", "")], False,
                            MergeOutcome(kept, dropped), trace)
    print_answer(result)  # a closing tag in an id or a query was a MarkupError; "[draft]" was dropped
    print_decisions(result)
    shown = " ".join(capsys.readouterr().out.split())
    assert "(fees [draft]#0)" in shown and "queries: what does [/x] cost?" in shown
    assert "kept [1] c0/fees [draft]#0" in shown and "dropped c0/old[/b]#1: passages" in shown


def test_an_answer_warning_is_said_beside_the_answer(capsys) -> None:
    from convrag.cli.chat import print_answer
    from convrag.merge.base import MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace

    print_answer(PipelineResult("Yes, they use guns.", [], False, MergeOutcome([]), TurnTrace(queries=["q"], answer={})))
    assert "caution" not in capsys.readouterr().out
    trace = TurnTrace(queries=["q"], answer={"warning": "the answer only restates the question: maybe a guess"})
    print_answer(PipelineResult("Yes, they use guns.", [], False, MergeOutcome([]), trace))
    assert "caution: the answer only restates the question: maybe a guess" in capsys.readouterr().out


def test_ctrl_c_in_a_command_says_interrupted_and_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import convrag.data.beir
    from convrag.cli.app import main

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(convrag.data.beir, "read_corpus", interrupted)
    monkeypatch.setattr(sys, "argv", ["convrag", "index", str(_corpus(tmp_path)), "-c", "tiny", "--no-dense",
                                      "--store", str(tmp_path / "store")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "interrupted"


def test_ask_refuses_a_question_before_it_loads_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    import convrag.cli.answers

    def loaded(*_: object) -> None:
        raise AssertionError("the pipeline (and its 1.1 GB model) was loaded for a question it refuses")

    monkeypatch.setattr(convrag.cli.answers, "pipeline_from", loaded)
    for question, message in [(" ", "the question is empty"), ("x" * 20_001, "the question is 20,001 characters; the limit is 20,000")]:
        result = runner.invoke(app, ["ask", question, "-c", "anything"])
        assert result.exit_code != 0 and str(result.exception) == message
        piped = runner.invoke(app, ["ask", "-", "-c", "anything"], input=question + "\n")  # "-": read from standard input
        assert piped.exit_code != 0 and str(piped.exception) == message
    # a byte that is not UTF-8 (a Latin-1 terminal) reaches Python as a lone surrogate: a tokenizer's TypeError traceback
    latin1 = runner.invoke(app, ["ask", "When does the caf\udce9 open?", "-c", "anything"])
    assert str(latin1.exception) == ("the question is not UTF-8 text: byte 0xe9 at character 18; set the terminal, or the file "
                                     "piped in, to UTF-8")


def test_a_question_piped_in_latin1_is_refused_by_its_byte(tmp_path: Path) -> None:
    piped = subprocess.run([sys.executable, "-m", "convrag", "ask", "-", "-c", "anything"], input=b"When does the caf\xe9 open?",
                           capture_output=True, env={"CONVRAG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1",
                                                     "PYTHONIOENCODING": "utf-8:strict"},  # as in an en_US.UTF-8 locale
                           timeout=300)
    assert piped.returncode == 1
    assert piped.stderr.decode().strip() == "error: the question is not UTF-8 text: byte 0xe9 at character 18; set the terminal, or the file piped in, to UTF-8"


def test_a_store_folder_beside_milvus_is_refused(tmp_path: Path) -> None:
    """--store was silently ignored with --backend milvus: a user naming both meant one of them."""
    store = ["--store", str(tmp_path / "store"), "--backend", "milvus", "--milvus-uri", str(tmp_path / "m.db")]
    for args in (["index", str(_corpus(tmp_path)), "-c", "x"], ["search", "fees", "-c", "x"], ["ask", "fees?", "-c", "x"], ["chat", "-c", "x"]):
        result = runner.invoke(app, [*args, *store])
        assert str(result.exception).startswith("--store names a folder of embedded collections; with --backend milvus"), args
    assert not (tmp_path / "m.db").exists() and not (tmp_path / "store").exists()


def test_serve_refuses_an_embedding_model_it_cannot_load_at_start(tmp_path: Path) -> None:
    """It started, and the first upload's job failed on the model (after a minute of the hub's
    retries when the name was not a folder)."""
    config = tmp_path / "convrag.yaml"
    config.write_text(f"embedding_model: {tmp_path / 'models' / 'mine'}\n")
    result = _convrag("serve", "--config", str(config), "--data-dir", str(tmp_path / "svc"), "--llm", "openai:m", home=tmp_path / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"error: cannot load embedding model '{tmp_path / 'models' / 'mine'}': no such folder" in result.stderr


def test_collections_are_listed_and_deleted(tmp_path: Path) -> None:
    """A store's collections could only be seen with ls and removed with rm -r (a build in progress too)."""
    store = str(tmp_path / "store")
    assert "no collections in " in runner.invoke(app, ["collections", "--store", store]).output
    for name, dense in (("tiny", "--dense"), ("words", "--no-dense")):
        built = runner.invoke(app, ["index", str(_corpus(tmp_path)), "-c", name, dense, "--store", store])
        assert built.exit_code == 0, built.output
    listed = runner.invoke(app, ["collections", "--store", store])
    assert listed.exit_code == 0, listed.output
    assert re.search(r"tiny +6 +all-MiniLM-L6-v2 +20\d\d-\d\d-\d\d \d\d:\d\d +[\d.]+ kB +/", listed.output), listed.output
    assert re.search(r"words +6 +none \(BM25 only\)", listed.output), listed.output
    assert str(tmp_path / "corpus.jsonl") in "".join(listed.output.split())  # a long path folds, it is not cut
    kept = runner.invoke(app, ["delete", "-c", "tiny", "--store", store], input="n\n")
    assert kept.exit_code == 1 and "delete collection tiny (6 passages, " in kept.output and "not deleted" in kept.output
    assert (tmp_path / "store" / "tiny" / "CURRENT").exists()
    deleted = runner.invoke(app, ["delete", "-c", "tiny", "--store", store], input="y\n")
    assert deleted.exit_code == 0 and "deleted collection tiny" in deleted.output
    assert not (tmp_path / "store" / "tiny").exists()
    unknown = runner.invoke(app, ["delete", "-c", "tiny", "--store", store, "-y"])
    assert str(unknown.exception) == f"unknown collection 'tiny' in {store} (known: words)"


def test_index_one_document_file(tmp_path: Path) -> None:
    """A single document was read as a BEIR corpus: "invalid JSON" for a .md, a decoding error for a .docx."""
    (tmp_path / "pricing.md").write_text("# Pricing\n\nThe Lite plan costs nothing per month.")
    store = str(tmp_path / "store")
    result = runner.invoke(app, ["index", str(tmp_path / "pricing.md"), "-c", "pricing", "--store", store, "--no-dense"])
    assert result.exit_code == 0, result.output
    found = runner.invoke(app, ["search", "lite plan cost", "-c", "pricing", "--store", store, "-r", "bm25", "-k", "1"])
    assert "pricing-0-" in found.output and "Pricing" in found.output
    (tmp_path / "blank.md").write_text("\n")
    (tmp_path / "budget.numbers").write_bytes(b"PK")
    for name, reason in (("blank.md", "no text"), ("budget.numbers", "not a BEIR corpus (.jsonl, .jsonl.gz, .jsonl.zip) nor a document")):
        refused = runner.invoke(app, ["index", str(tmp_path / name), "-c", "x", "--store", store, "--no-dense"])
        assert str(refused.exception).startswith(f"{tmp_path / name}: {reason}"), refused.output


def test_index_notes_each_page_ocr_reads_on_the_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scanned PDF is read at a second or two a page; the bar said nothing for minutes, then not which file
    of a folder (or of an archive in it) the pages were of."""
    from convrag.console import RichReporter
    from tests.ingest.test_ocr import _scan

    notes: list[str] = []
    monkeypatch.setattr(RichReporter, "note", lambda self, what: notes.append(what))
    (tmp_path / "docs").mkdir()
    _scan(tmp_path / "docs" / "scan.pdf", pages=[0, 1])
    for source in (tmp_path / "docs" / "scan.pdf", tmp_path / "docs"):
        notes.clear()
        result = runner.invoke(app, ["index", str(source), "-c", "scans", "--store", str(tmp_path / "store"), "--no-dense", "--rebuild"])
        assert result.exit_code == 0, result.output
        assert notes == ["scan.pdf: page 1 of 2 read by OCR", "scan.pdf: page 2 of 2 read by OCR"]
    import zipfile

    with zipfile.ZipFile(tmp_path / "scans.zip", "w") as archive:
        archive.write(tmp_path / "docs" / "scan.pdf", "Letters/March scan.pdf")
    notes.clear()
    result = runner.invoke(app, ["index", str(tmp_path / "scans.zip"), "-c", "scans", "--store", str(tmp_path / "store"), "--no-dense",
                                 "--rebuild"])
    assert result.exit_code == 0, result.output
    assert notes == ["March scan.pdf: page 1 of 2 read by OCR", "March scan.pdf: page 2 of 2 read by OCR"]


def test_index_a_zip_archive_of_documents_and_still_a_zipped_beir_corpus(tmp_path: Path) -> None:
    """A downloaded Drive folder or a Notion export is a .zip: "not a BEIR corpus ... nor a document". It is
    read as one document of its files, as a .tar.gz is; a BEIR corpus zipped as .jsonl.zip is still read as a corpus."""
    import tarfile
    import zipfile

    with zipfile.ZipFile(tmp_path / "export.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("Harbour/Fees.md", "# Fees\n\nA mooring costs 40 dollars a night.\n")
        archive.writestr("Harbour/logo.png", b"\x89PNG")
    store = str(tmp_path / "store")
    result = runner.invoke(app, ["index", str(tmp_path / "export.zip"), "-c", "export", "--store", store, "--no-dense"])
    assert result.exit_code == 0, result.output
    found = runner.invoke(app, ["search", "mooring night", "-c", "export", "--store", store, "-r", "bm25", "-k", "1"])
    assert "export-0-" in found.output and "A mooring costs 40 dollars a night." in found.output
    (tmp_path / "winter.txt").write_text("Winter berths cost 310 dollars a season.")
    with tarfile.open(tmp_path / "packed.tar.gz", "w:gz") as packed:  # a folder packed on Linux: "not a BEIR corpus ... nor a document"
        packed.add(tmp_path / "winter.txt", "Harbour/winter.txt")
    result = runner.invoke(app, ["index", str(tmp_path / "packed.tar.gz"), "-c", "packed", "--store", store, "--no-dense"])
    assert result.exit_code == 0, result.output
    found = runner.invoke(app, ["search", "winter berth", "-c", "packed", "--store", store, "-r", "bm25", "-k", "1"])
    assert "packed-0-" in found.output and "Winter berths cost 310 dollars a season." in found.output
    with zipfile.ZipFile(tmp_path / "corpus.jsonl.zip", "w") as archive:
        archive.write(write_jsonl(tmp_path / "corpus.jsonl", [{"_id": p.doc_id, "title": p.title, "text": p.text} for p in TINY]),
                      "corpus.jsonl")
    result = runner.invoke(app, ["index", str(tmp_path / "corpus.jsonl.zip"), "-c", "tiny", "--store", store, "--no-dense"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["search", "passport renewal fee", "-c", "tiny", "--store", store, "-r", "bm25", "-k", "1"]).output.startswith("1. p2")


def test_index_a_web_page_or_a_crawled_section_of_a_site(tmp_path: Path, served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """A documentation site's section: `convrag index https://...` took the address for a path ("https:/...")
    and said it was no corpus. One page is read alone; with --crawl the pages under its folder, each cited by its
    own address; what is not read is named. The progress says how many pages the crawl has found (it showed
    only the page being read, with no end to the count)."""
    from convrag.console import RichReporter

    notes: list[str] = []
    monkeypatch.setattr(RichReporter, "note", lambda self, what: notes.append(what))
    store = str(tmp_path / "store")
    result = runner.invoke(app, ["index", f"{served.address}/docs/", "-c", "site", "--store", store, "--no-dense", "--crawl",
                                 "--delay", "0", "-H", "Authorization: Bearer wiki-token"])
    assert result.exit_code == 0, result.output
    assert notes[0] == f"page 1 of 1 found: {served.address}/docs/" and re.match(r"page (\d+) of \1 found: ", notes[-1])
    assert len(notes) > 3 and len({n.split(" found: ")[0] for n in notes}) == len(notes)  # a count that moves with every page
    assert "skipped" in result.output and "disallowed by the site's robots.txt" in result.output
    assert {auth for _, _, auth in served.requests} == {"Bearer wiki-token"}
    found = runner.invoke(app, ["search", "mooring night", "-c", "site", "--store", store, "-r", "bm25", "-k", "1"])
    assert "guide/fees-0-" in found.output and "A mooring costs 40 dollars a night." in found.output
    result = runner.invoke(app, ["index", f"{served.address}/docs/guide/winter.html", "-c", "page", "--store", store, "--no-dense"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["search", "winter", "-c", "page", "--store", store, "-r", "bm25", "-k", "5"]).output.count("winter-0-") == 1
    result = runner.invoke(app, ["index", f"{served.address}/docs/", "-c", "x", "--store", store, "--no-dense", "-H", "Authorization"])
    assert result.exit_code != 0 and "--header must be 'Name: value'; got 'Authorization'" in str(result.exception)
    result = runner.invoke(app, ["index", str(tmp_path), "-c", "x", "--store", store, "--no-dense", "--crawl"])
    assert result.exit_code != 0 and "--crawl, --max-pages, --delay and --header are for a web address" in str(result.exception)


def test_eval_measures_a_strategy_of_ones_own(tmp_path: Path) -> None:
    """Comparing one's own strategy with the built-in ones meant editing convrag's registry."""
    own = str(Path(__file__).parents[2] / "examples" / "previous_question.py") + ":PreviousQuestion"
    out = tmp_path / "out"
    result = runner.invoke(app, ["eval", "--data", str(sample_root()), "--domains", "govt", "-r", "bm25", "-q", "lastturn",
                                 "-s", f"{own},last_turn", "--fuse", f"lastturn+{own}", "--index-dir", str(tmp_path / "indexes"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    queries = [json.loads(line) for line in (out / "strategies" / "previous_question" / "queries.jsonl").read_text().splitlines()]
    assert queries and all(q["text"].startswith("|user|: ") for q in queries)
    assert (out / "bm25_previous_question" / "results.jsonl").exists()
    assert "bm25+previous_question" in (out / "summary.md").read_text()


def test_strategies_lists_the_built_in_ones_and_checks_ones_own() -> None:
    own = str(Path(__file__).parents[2] / "examples" / "previous_question.py") + ":PreviousQuestion"
    listed = runner.invoke(app, ["strategies", own])
    assert listed.exit_code == 0, listed.output
    flat = " ".join(listed.output.split())
    assert all(name in flat for name in ("last_turn", "full_rewrite", "targeted", "mmr_cluster", "summary", "progressive"))
    assert "(yours)" in flat and "the user's previous question" in flat
    broken = runner.invoke(app, ["strategies", "tests.strategies.own_strategies:NoRewrite"])
    assert broken.exit_code != 0 and "has no name and rewrite(task) method" in str(broken.exception)


def test_a_failed_answer_says_why_at_the_command_line(tmp_path: Path) -> None:
    """The service keeps a backend's reason in its log; the command line said only "the language
    model could not answer; try again", whether the server was down or a proxy answered for it."""
    home = tmp_path / "home"
    assert _convrag("index", str(_corpus(tmp_path)), "-c", "tiny", "--no-dense", home=home).returncode == 0
    with GarbageServer(b"<html>Sign in to the proxy</html>", "text/html") as proxy:
        asked = _convrag("ask", "How much is a passport renewal?", "-c", "tiny", "-r", "bm25", "-s", "last_turn",
                         "--llm", "openai:m", "--llm-url", f"{proxy.url}/v1", "--no-llm-cache", home=home)
    assert asked.returncode == 1 and "Traceback" not in asked.stderr
    assert asked.stderr.strip() == (f"error: the language model could not answer; try again ({proxy.url}/v1 (m): the reply "
                                    "is not a stream of chat completion chunks)")


@pytest.mark.parametrize(("options", "got"), [(["--max-tokens", "0"], "0 and 100"), (["--overlap", "-5"], "512 and -5"),
                                              (["--max-tokens", "50", "--overlap", "60"], "50 and 60")])
def test_passage_sizes_that_cannot_chunk_are_refused_in_one_line(tmp_path: Path, options: list[str], got: str) -> None:
    """They raised the chunker's ValueError as a traceback, after the embedding model had loaded."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "fees.md").write_text("# Fees\n\nRenewal costs 130 dollars.")
    result = _convrag("index", str(tmp_path / "docs"), "-c", "docs", *options, home=tmp_path / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"error: --max-tokens must be above --overlap, and --overlap at least 0; got {got}"


@pytest.mark.parametrize("args", [
    ["run-incremental", "--conversations", "-1"],  # sliced [:-1]: every conversation but the last, without a word
    ["run-incremental", "--conversations", "0"],
    ["eval-answers", "--answerable", "-5"],  # random.sample's ValueError after the indexes were built
    ["eval-answers", "--unanswerable", "-2"],
    ["eval-answers", "--conversations", "-1"],
    ["eval", "--workers", "0"],
    ["bench", "service", "--turns", "0"],
    ["bench", "retrieval", "--synthetic", "0"],
], ids=lambda a: " ".join(a))
def test_counts_out_of_range_are_usage_errors(args: list[str], tmp_path: Path) -> None:
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{args[-2]}'" in " ".join(result.output.split()).replace("│", "")
    assert not (tmp_path / "out").exists()


def test_a_chat_line_piped_in_latin1_is_refused_and_the_chat_goes_on(tmp_path: Path) -> None:
    """In a UTF-8 locale other than C, Python's stdin is strict: a piped cp1252 line ended the chat
    with a UnicodeDecodeError traceback. The line is refused by its byte, and the next is read."""
    store = tmp_path / "store"
    runner.invoke(app, ["index", str(_corpus(tmp_path)), "-c", "tiny", "--store", str(store), "--no-dense"])
    chat = subprocess.run([sys.executable, "-m", "convrag", "chat", "-c", "tiny", "--store", str(store), "-r", "bm25"],
                          input=b"When does the caf\xe9 open?\n/quit\n", capture_output=True, timeout=300,
                          env={"CONVRAG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1",
                               "PYTHONIOENCODING": "utf-8:strict", "COLUMNS": "300"})
    out = chat.stdout.decode()
    assert chat.returncode == 0, chat.stderr.decode()[-500:]
    assert "error: the question is not UTF-8 text: byte 0xe9 at character 18" in out and out.rstrip().endswith("you>")


def test_the_decisions_panel_shows_a_follow_ups_score_with_the_question_before_it(capsys) -> None:
    from convrag.cli.chat import print_decisions
    from convrag.merge.base import MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace

    compression = {"kept_sentences": [2], "total_sentences": [3], "relevance": 0.35, "relevance_in_context": 0.61}
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), TurnTrace(queries=["q"], answer={"details": {"compression": compression}})))
    assert "2 of 3 passage sentences, relevance 0.35, 0.61 with the question before it" in " ".join(capsys.readouterr().out.split())


def test_a_social_turn_shows_its_reply_and_why_nothing_was_searched(capsys) -> None:
    from convrag.cli.chat import print_answer, print_decisions
    from convrag.merge.base import MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace

    result = PipelineResult("You're welcome!", [], False, MergeOutcome([]), TurnTrace(social={"kind": "thanks", "reply": "You're welcome!"}))
    print_answer(result)
    print_decisions(result)
    out = " ".join(capsys.readouterr().out.split())
    assert "a social turn (thanks): replied without a search or a model call" in out
    assert "(no citations)" not in out and "queries:" not in out


def test_the_decisions_panel_names_the_heading_a_sentence_scored_under(capsys) -> None:
    from convrag.cli.chat import print_decisions
    from convrag.merge.base import MergeOutcome
    from convrag.pipeline import PipelineResult
    from convrag.pipeline.trace import TurnTrace

    compression = {"kept_sentences": [2], "total_sentences": [3], "relevance": 0.68, "relevance_heading": "3. Sick [leave]"}
    print_decisions(PipelineResult("A [1].", [], False, MergeOutcome([]), TurnTrace(queries=["q"], answer={"details": {"compression": compression}})))
    assert 'relevance 0.68 (read under "3. Sick [leave]")' in " ".join(capsys.readouterr().out.split())


def test_ask_and_chat_take_the_answer_settings(tmp_path) -> None:
    """``--answers`` (e.g. ``layout``) was an option of ``eval-answers`` alone; an unknown name is refused
    before anything loads."""
    from convrag.cli.answers import spec_from

    assert spec_from("docs", "auto", "progressive", "enhanced", "strategy", 10, "layout").answer == "layout"
    for command in (["ask", "What is it?"], ["chat"]):
        result = runner.invoke(app, [*command, "-c", "docs", "--store", str(tmp_path), "--answers", "verbose"])
        assert result.exit_code != 0 and "unknown answer settings 'verbose'" in str(result.exception)  # said as "error: ..." by main()


def test_ask_and_chat_take_the_decline_floor(tmp_path) -> None:
    """``--decline-below`` moves the gate's floor (the trace's "best cosine 0.43 < 0.45"); a floor that
    is no cosine, or one for answer settings without the gate, is refused before anything loads."""
    from convrag.cli.answers import spec_from
    from convrag.pipeline.build import answer_settings

    spec = spec_from("docs", "auto", "progressive", "enhanced", "strategy", 10, "default", 0.3)
    assert answer_settings(spec).decline.min_relevance == 0.3  # type: ignore[union-attr]
    for command in (["ask", "What is it?"], ["chat"]):
        for extra, said in ((["--decline-below", "1.5"], "a cosine from 0 to 1; got 1.5"),
                            (["--answers", "first", "--decline-below", "0.3"], "'first' have no decline gate")):
            result = runner.invoke(app, [*command, "-c", "docs", "--store", str(tmp_path), *extra])
            assert result.exit_code != 0 and said in str(result.exception), (command, extra)


def test_ask_and_chat_take_the_answer_budget(tmp_path) -> None:
    """The merge's budget (1000 tokens of whole passages) lets 2 or 3 of a document's 512-token chunks
    reach the answer, and only Python could change it. ``--answer-tokens`` sets it, 0 lifts it, and a
    budget the pipeline refuses is said before anything loads."""
    from convrag.cli.answers import spec_from

    assert spec_from("docs", "auto", "progressive", "enhanced", "strategy", 10).answer_tokens == 1000
    assert spec_from("docs", "auto", "progressive", "enhanced", "strategy", 10, answer_tokens=2500).answer_tokens == 2500
    assert spec_from("docs", "auto", "progressive", "enhanced", "strategy", 10, answer_tokens=0).answer_tokens is None
    for command in (["ask", "What is it?"], ["chat"]):
        result = runner.invoke(app, [*command, "-c", "docs", "--store", str(tmp_path), "--answer-tokens", "20"])
        assert result.exit_code != 0 and "50 tokens of budget; got 5 passages and 20 tokens" in str(result.exception), command
        result = runner.invoke(app, [*command, "-c", "docs", "--store", str(tmp_path), "--answer-tokens", "-1"])
        assert result.exit_code == 2 and "Invalid value for '--answer-tokens'" in " ".join(result.output.split()).replace("│", ""), command


def test_eval_answers_takes_the_decline_floor_for_the_settings_it_measures(tmp_path) -> None:
    """A floor could be tried in a chat but not measured on MT-RAG: ``eval-answers`` had no
    ``--decline-below``. It applies to the settings asked for, not to the first prompt they are
    compared with (no gate), and a floor they cannot take is refused before the data is read."""
    from convrag.cli.evaluate import answer_spec
    from convrag.pipeline.build import answer_settings

    measured = answer_spec("govt", "progressive", "default", "default", 0.35)
    assert answer_settings(measured).decline.min_relevance == 0.35 and measured.collections == ("govt",)  # type: ignore[union-attr]
    assert answer_spec("govt", "progressive", "first", "default", 0.35).decline_below is None
    for extra, said in ((["--decline-below", "-0.1"], "a cosine from 0 to 1; got -0.1"),
                        (["--answers", "first", "--decline-below", "0.3"], "'first' have no decline gate")):
        result = runner.invoke(app, ["eval-answers", "--data", str(tmp_path / "no-data"), "--out", str(tmp_path / "out"), *extra])
        assert result.exit_code != 0 and said in str(result.exception), extra
        assert not (tmp_path / "out").exists()


def test_the_decisions_panel_of_a_turn_the_gate_declined_names_the_floors_option(tiny_collection, capsys) -> None:
    """A turn declined at "best cosine 0.31 < 0.45" said nothing of how to move the floor."""
    from convrag.cli.chat import print_decisions
    from convrag.pipeline import PipelineSpec, build_pipeline
    from convrag.types import Message
    from tests.helpers import ScriptedLLM

    pipeline = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn"), llm=ScriptedLLM(), opened={"tiny": tiny_collection})
    print_decisions(pipeline.answer([Message("user", "What is the price of a driving licence?")]))
    assert "(the floor is --decline-below, /decline-below in a chat: lower it if the passages kept hold the answer)" in " ".join(capsys.readouterr().out.split())
    answered = build_pipeline(PipelineSpec(("tiny",), strategy="last_turn"), llm=ScriptedLLM(answer=["It costs 130 dollars [1]."]),
                              opened={"tiny": tiny_collection})
    print_decisions(answered.answer([Message("user", "How much does passport renewal cost?")]))
    assert "--decline-below" not in capsys.readouterr().out


def test_the_decisions_panel_names_the_budgets_option_when_a_passage_was_dropped_for_it(tiny_collection, capsys) -> None:
    """A passage "dropped: budget (300 tokens do not fit)" said nothing of how to let it through."""
    from convrag.cli.chat import print_decisions
    from convrag.pipeline import PipelineSpec, build_pipeline
    from convrag.types import Message
    from tests.helpers import ScriptedLLM

    question = [Message("user", "How much does passport renewal cost?")]
    hint = "(the budget is --answer-tokens: raise it, or 0 for none, if a passage dropped for it holds the answer)"
    for tokens, shown in ((50, True), (None, False)):
        spec = PipelineSpec(("tiny",), strategy="last_turn", answer_tokens=tokens)
        result = build_pipeline(spec, llm=ScriptedLLM(answer=["It costs 130 dollars [1]."]), opened={"tiny": tiny_collection}).answer(question)
        assert any(d.reason == "budget" for d in result.trace.merge.dropped) is shown  # type: ignore[union-attr]
        print_decisions(result)
        assert (hint in " ".join(capsys.readouterr().out.split())) is shown, tokens
