"""Find the MT-RAG files in a data folder, in either supported layout.

Two layouts are read:

* the shared folder (and the bundled sample): ``conversations.json``,
  ``corpora/{domain}.jsonl.gz``, ``retrieval_tasks/{domain}/...``;
* the official repository: ``corpora/passage_level/{domain}.jsonl.zip``,
  ``mtrag-human/conversations/conversations.json`` (or ``human/...``) and the same
  ``retrieval_tasks`` tree under ``mtrag-human/`` or ``human/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

from ..errors import ConfigError
from ..types import Message, Task
from .beir import read_qrels, read_queries
from .conversations import Conversation, assign_conversation_ids, load_conversations
from .domains import DOMAINS
from .splits import assign_splits, check_split, conversation_of, in_split

QUERY_KINDS = ("lastturn", "rewrite", "questions")

_CONVERSATION_CANDIDATES = (
    "conversations.json",
    "mtrag-human/conversations/conversations.json",
    "human/conversations/conversations.json",
    "conversations/conversations.json",
)
_TASK_ROOT_CANDIDATES = ("retrieval_tasks", "mtrag-human/retrieval_tasks", "human/retrieval_tasks")
_CORPUS_PATTERNS = (
    "corpora/{d}.jsonl.gz",
    "corpora/{d}.jsonl",
    "corpora/{d}.jsonl.zip",
    "corpora/passage_level/{d}.jsonl.zip",
    "corpora/passage_level/{d}.json.zip",  # the official release names the cloud corpus this way
    "corpora/passage_level/{d}.jsonl.gz",
    "corpora/passage_level/{d}.jsonl",
)


def sample_root() -> Path:
    """The bundled MT-RAG slice shipped inside the package (see its ATTRIBUTION.md)."""
    return Path(str(resources.files("convrag") / "sample" / "mtrag"))


def _first_existing(root: Path, candidates: tuple[str, ...]) -> Path | None:
    for candidate in candidates:
        if (root / candidate).exists():
            return root / candidate
    return None


@dataclass
class MTRAGData:
    """The MT-RAG files under one folder. Use :meth:`discover` to build one."""

    root: Path
    conversations_path: Path | None
    tasks_root: Path
    corpus_paths: dict[str, Path] = field(default_factory=dict)
    #: which half of the conversations :meth:`tasks` returns: ``dev``, ``test`` or ``all``
    split: str = "all"

    @classmethod
    def discover(cls, root: Path | str, split: str = "all") -> MTRAGData:
        root = Path(root)
        if not root.is_dir():
            raise ConfigError(f"data folder {root} does not exist")
        tasks_root = _first_existing(root, _TASK_ROOT_CANDIDATES)
        if tasks_root is None:
            raise ConfigError(
                f"no retrieval_tasks folder under {root} (looked for {', '.join(_TASK_ROOT_CANDIDATES)})"
            )
        corpora = {}
        for domain in DOMAINS:
            found = _first_existing(root, tuple(p.format(d=domain) for p in _CORPUS_PATTERNS))
            if found is not None:
                corpora[domain] = found
        return cls(
            root=root,
            conversations_path=_first_existing(root, _CONVERSATION_CANDIDATES),
            tasks_root=tasks_root,
            corpus_paths=corpora,
            split=check_split(split),
        )

    def with_split(self, split: str) -> MTRAGData:
        """The same files, with :meth:`tasks` limited to another half."""
        return MTRAGData(self.root, self.conversations_path, self.tasks_root, dict(self.corpus_paths), check_split(split))

    @cached_property
    def splits(self) -> dict[str, str]:
        """``{conversation_id: "dev" | "test"}`` over every domain (see :mod:`convrag.data.splits`)."""
        by_domain = {d: [conversation_of(t) for t in self.queries(d, "lastturn")] for d in self.domains}
        return assign_splits(by_domain)

    @property
    def domains(self) -> list[str]:
        """Domains that have both a corpus and retrieval tasks here."""
        return [d for d in DOMAINS if d in self.corpus_paths and (self.tasks_root / d).is_dir()]

    def corpus_path(self, domain: str) -> Path:
        if domain not in self.corpus_paths:
            raise ConfigError(f"no corpus for domain {domain!r} under {self.root}")
        return self.corpus_paths[domain]

    def query_path(self, domain: str, kind: str) -> Path:
        if kind not in QUERY_KINDS:
            raise ConfigError(f"unknown query file kind {kind!r}; expected one of {', '.join(QUERY_KINDS)}")
        return self.tasks_root / domain / f"{domain}_{kind}.jsonl"

    def queries(self, domain: str, kind: str) -> dict[str, str]:
        return read_queries(self.query_path(domain, kind))

    def qrels(self, domain: str) -> dict[str, dict[str, int]]:
        return read_qrels(self.tasks_root / domain / "qrels" / "dev.tsv")

    @cached_property
    def conversations(self) -> list[Conversation]:
        """All conversations, with ids recovered from the questions files where the file lacks them."""
        if self.conversations_path is None:
            return []
        conversations = load_conversations(self.conversations_path)
        if any(not c.conversation_id for c in conversations):
            questions: dict[str, str] = {}
            for domain in self.domains:
                path = self.query_path(domain, "questions")
                if path.exists():
                    questions.update(read_queries(path))
            conversations = assign_conversation_ids(conversations, questions)
        return conversations

    def tasks(self, domain: str) -> list[Task]:
        """The benchmark's retrieval tasks of a domain (those in its ``lastturn`` file) in the
        chosen :attr:`split`, in file order.

        History comes from ``conversations.json`` (questions and the benchmark's own
        agent answers). Without that file, history is rebuilt from the ``questions``
        file and holds the user's questions only.
        """
        lastturn = {
            task_id: text
            for task_id, text in self.queries(domain, "lastturn").items()
            if in_split(conversation_of(task_id), self.split, self.splits)
        }
        by_id: dict[str, Task] = {}
        for conversation in self.conversations:
            if conversation.domain == domain:
                for task in conversation.tasks():
                    by_id[task.task_id] = task
        if not by_id:
            by_id = self._tasks_from_query_files(domain)
        missing = [task_id for task_id in lastturn if task_id not in by_id]
        if missing:
            by_id.update({t.task_id: t for t in self._tasks_from_query_files(domain).values() if t.task_id in missing})
        return [by_id[task_id] for task_id in lastturn if task_id in by_id]

    def _tasks_from_query_files(self, domain: str) -> dict[str, Task]:
        lastturn = self.queries(domain, "lastturn")
        questions_path = self.query_path(domain, "questions")
        questions = read_queries(questions_path) if questions_path.exists() else {}
        tasks = {}
        for task_id, question in lastturn.items():
            conversation_id, _, turn = task_id.partition("<::>")
            earlier = [q for q in questions.get(task_id, question).split("\n") if q.strip()][:-1]
            history = tuple(Message("user", q) for q in earlier)
            tasks[task_id] = Task(
                task_id=task_id,
                conversation_id=conversation_id,
                turn=int(turn) if turn.isdigit() else len(earlier) + 1,
                domain=domain,
                question=question,
                history=history,
            )
        return tasks
