"""Printing answers with their citations and decisions; the interactive ``convrag chat`` loop."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

from rich.live import Live
from rich.markup import escape
from rich.panel import Panel

from ..console import console
from ..errors import ConvragError
from ..generate.answer import Sampling
from ..pipeline import LivePipeline, Pipeline, PipelineResult
from ..pipeline.read_ahead import ReadAhead
from ..types import Message
from .app import said

HELP = ("commands: /trace (decisions of the last turn), /json (its full trace), /again (another answer to the last "
        "question), /collections [A,B] (what is searched; change it), /decline-below [X] (the decline gate's floor; "
        "change it), /save FILE (the conversation, for --history), "
        "/reset, /help, /quit; Ctrl-C stops an answer")
#: a line that is one slash-word is a command, known or not: a mistyped "/trcae" is not asked as a question
#: (a question that starts with a path, "/etc/hosts format?", is not one word)
_COMMAND = re.compile(r"/[A-Za-z-]+")


def print_answer(result: PipelineResult) -> None:
    console.print(Panel(escape(result.text), title="answer", expand=True), highlight=False, soft_wrap=False)
    for c in result.citations:
        where = f" {c.url}" if c.url else ""
        how = " [dim](matched by wording)[/dim]" if c.inferred else ""
        console.print(f"  \\[{c.number}] {escape(c.collection)} / {escape(c.title or c.document_id)} ({escape(c.passage_id)}){escape(where)}{how}",
                      highlight=False)
    if not result.citations and result.trace.social is None:  # a reply to "Thanks!" has nothing to cite
        console.print("  [dim](no citations)[/dim]")
    warning = (result.trace.answer or {}).get("warning")
    if warning:  # said beside the answer, not only in the decisions: it is about whether to trust it
        console.print(f"  [yellow]caution:[/yellow] {escape(str(warning))}", highlight=False)
    for name, why in unsearched(result).items():  # so is a source the answer could not draw from
        console.print(f"  [yellow]caution:[/yellow] the collection {escape(name)} could not be searched ({escape(why)})", highlight=False)


def unsearched(result: PipelineResult) -> dict[str, str]:
    """The collections a turn meant to search but could not (damaged, failed, timed out), with why."""
    return dict(result.trace.search.failures) if result.trace.search is not None else {}


def print_decisions(result: PipelineResult) -> None:
    t = result.trace
    lines = []
    if t.social is not None:
        lines.append(f"a social turn ({escape(t.social['kind'])}): replied without a search or a model call")
    if t.strategy is not None:
        s = t.strategy
        lines.append(f"strategy {s.strategy}: stage {s.stage}, {len(s.calls)} LLM call(s), {s.prompt_tokens} prompt tokens")
        lines += [f"fallback at {f.stage}: {escape(f.reason)}" for f in s.fallbacks]
        lines += [_sent_without(f"{c.purpose} call", c.sent_without) for c in s.calls if c.sent_without]
    if t.queries:
        lines.append(f"queries: {escape(' | '.join(t.queries))}")
    if t.routing is not None:
        scores = ", ".join(f"{n} {v:.2f}" for n, v in t.routing.scores.items())
        lines.append(f"routing: searched {escape(', '.join(t.routing.kept))} (scores {escape(scores)})")
    if t.search is not None:
        lines.append("collections: " + escape(", ".join(f"{n} {sec * 1000:.0f} ms" for n, sec in t.search.seconds.items())))
        lines += [f"[red]failed[/red] {escape(n)}: {escape(why)}" for n, why in t.search.failures.items()]
    if t.merge is not None:
        for i, r in enumerate(t.merge.results, start=1):
            lines.append(f"kept \\[{i}] {escape(f'{r.hit.collection}/{r.hit.passage_id}')}: {escape(r.selection_reason)}")
        for d in t.merge.dropped[:10]:
            lines.append(f"[dim]dropped {escape(f'{d.hit.collection}/{d.hit.passage_id}')}: {escape(d.reason)} ({escape(d.detail)})[/dim]")
        if any(d.reason == "budget" for d in t.merge.dropped):
            lines.append("[dim](the budget is --answer-tokens: raise it, or 0 for none, if a passage dropped for it holds the answer)[/dim]")
    answer = t.answer or {}
    for key in ("fallback", "warning"):
        if answer.get(key):
            lines.append(f"answer {key}: {escape(str(answer[key]))}")
    if "declined_below" in (answer.get("details") or {}):
        lines.append("[dim](the floor is --decline-below, /decline-below in a chat: lower it if the passages kept hold the answer)[/dim]")
    if (answer.get("llm_call") or {}).get("sent_without"):
        lines.append(_sent_without("answer call", answer["llm_call"]["sent_without"]))
    details = answer.get("details") or {}
    if "compression" in details:
        c = details["compression"]
        with_before = f", {c['relevance_in_context']:.2f} with the question before it" if "relevance_in_context" in c else ""
        under = f" (read under \"{escape(c['relevance_heading'])}\")" if c.get("relevance_heading") else ""
        lines.append(f"answer prompt: {sum(c['kept_sentences'])} of {sum(c['total_sentences'])} passage sentences, "
                     f"relevance {c['relevance']:.2f}{under}{with_before}")
    steering = details.get("steering")
    if steering:
        doubt = steering.get("first_choice_p")
        refused = steering.get("citation_refused")
        lines.append(f"steered decoding: {steering.get('citation_nudges', 0)} sentence(s) made to cite"
                     + (f" ({refused} written on without a number after the opener)" if refused else "")
                     + (f", doubt (decline first) {doubt:.2f}" if doubt is not None else "")
                     + (f", passage wording {steering['copy_followed']}/{steering['copy_steps']}"
                        if steering.get("copy_steps") else ""))
    if steering and steering.get("error"):
        lines.append(f"[red]steered decoding failed[/red] (the model wrote on unsteered): {escape(steering['error'])}")
    if answer.get("invalid_citations"):
        lines.append(f"citation numbers that name no passage (re-pointed or taken out): {answer['invalid_citations']}")
    for moved in answer.get("repointed_citations", []):
        lines.append(f"citation re-pointed in sentence {moved['sentence'] + 1}: {moved['written']} -> [{moved['to']}]")
    for sentence in details.get("declined_in_part", []):
        lines.append(f"declined in part, the rest answered: {escape(sentence)}")
    if details.get("grouped_citations"):
        lines.append(f"numbers cited together, each made a marker: {escape(', '.join(details['grouped_citations']))}")
    if details.get("echo_retry"):
        retry = details["echo_retry"]
        lines.append(f"the first answer repeated the question word for word ({escape(retry['first']['answer'])}): "
                     f"written again, sampled (seed {retry['sampling']['seed']})")
    if details.get("repeat"):
        lines.append("the answer repeats an earlier answer word for word (--answers retry-repeat writes it once more)")
    if details.get("repeat_retry"):
        retry = details["repeat_retry"]
        lines.append(f"the first answer repeated an earlier answer ({escape(retry['first']['answer'])}): written again, "
                     f"sampled (seed {retry['sampling']['seed']})" + ("; it repeated again, and stands" if retry.get("again") else ""))
    lines.append("timings: " + ", ".join(f"{k} {v:.2f} s" for k, v in t.timings_s.items()))
    console.print(Panel("\n".join(lines), title="decisions", expand=True), highlight=False, soft_wrap=False)


def _sent_without(call: str, parameters: Sequence[str]) -> str:
    return f"{call} sent without {escape(', '.join(parameters))}: the endpoint refuses them"


def stream_answer(pipeline: Pipeline, messages: Sequence[Message], task_id: str, sampling: Sampling | None = None) -> PipelineResult:
    """The turn's answer, shown as the model writes it: a draft that the answer with its citations
    replaces when done (a terminal only; elsewhere the answer is printed once). On two cores the
    first words come seconds before the whole. Ctrl-C raises KeyboardInterrupt here, after the
    turn's generation is closed, so the model is free for the next question.

    The turn is given a stop that nothing sets: with one, the local model reads the answer's prompt
    in pieces (:meth:`~convrag.llm.local.LocalLLM.stream`), and Python raises the KeyboardInterrupt
    between two of them. Read in one call, the prompt held Ctrl-C back for all of its seconds."""
    result: PipelineResult | None = None
    text = ""
    with closing(pipeline.stream(messages, task_id, sampling=sampling, stop=threading.Event())) as pieces, Live(console=console, transient=True, refresh_per_second=8) as live:
        for item in pieces:
            if isinstance(item, PipelineResult):
                result = item
            else:
                text += item
                live.update(Panel(escape(text), title="answer (being written; Ctrl-C stops it)", border_style="dim"))
    assert result is not None
    return result


def save_history(target: str, history: Sequence[Message]) -> None:
    """Write the conversation where ``convrag chat --history`` (and ``ask --history``) reads it back.
    Written whole or not at all (a file written before stays as it was if the write fails)."""
    from ..index.atomic import write_json

    if not target:
        console.print("[dim]usage: /save FILE (a JSON file; convrag chat --history FILE goes on from it)[/dim]")
        return
    path = Path(target).expanduser()
    if not path.parent.is_dir():  # the writer makes missing folders: a mistyped one was made, and the file saved there
        console.print(f"[red]error:[/red] cannot write {escape(str(path))}: there is no folder {escape(str(path.parent))}")
        return
    try:
        write_json(path, {"messages": [{"speaker": m.speaker, "text": m.text} for m in history]})
    except OSError as exc:
        console.print(f"[red]error:[/red] cannot write {escape(str(path))}: {escape(exc.strerror or str(exc))}")
        return
    console.print(f"[dim]saved {len(history)} message(s) to {escape(str(path))}[/dim]")


def choose_collections(source: Pipeline | LivePipeline, pipeline: Pipeline, names: str) -> Pipeline:
    """``/collections``: say what the chat searches, or search ``names`` (comma-separated) from the
    next question on; the conversation goes on. The pipeline the next turn uses is returned."""
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    if not chosen or not isinstance(source, LivePipeline):
        what = ", ".join(c.name for c in pipeline.collections)
        hint = "; /collections A,B searches others from the next question" if isinstance(source, LivePipeline) else ""
        console.print(f"[dim]searching {escape(what)}{hint}[/dim]")
        return pipeline
    return _switched(pipeline, lambda: source.choose(chosen), f"searching {escape(', '.join(chosen))}",
                     f"; still searching {escape(', '.join(c.name for c in pipeline.collections))}")


def choose_floor(source: Pipeline | LivePipeline, pipeline: Pipeline, given: str) -> Pipeline:
    """``/decline-below``: say the decline gate's floor, or set it to ``given`` from the next
    question on (``/again`` asks the last one again). A turn declined at "best cosine 0.37 < 0.45"
    could only be asked again in a new chat started with ``--decline-below``. The pipeline the next
    turn uses is returned."""
    if not isinstance(source, LivePipeline):
        console.print("[dim]this chat's decline floor cannot be changed[/dim]")
        return pipeline
    if not given.strip():
        floor = source.decline_floor()
        said = "no decline gate (these answer settings have none)" if floor is None else f"declining below a best cosine of {floor:g}"
        console.print(f"[dim]{said}; /decline-below X sets it from the next question (0 turns the gate off)[/dim]")
        return pipeline
    try:
        floor = float(given)
    except ValueError:
        console.print(f"[red]error:[/red] the floor is a number from 0 to 1, as in /decline-below 0.35; got {escape(given.strip())}")
        return pipeline
    return _switched(pipeline, lambda: source.set_decline_below(floor), f"declining below {floor:g} (/again asks the last question again)")


def _switched(pipeline: Pipeline, switch: Callable[[], Pipeline], told: str, still: str = "") -> Pipeline:
    """The pipeline ``switch`` builds, the user told what the next question uses; the one before
    where it cannot be built (the error said, with ``still``)."""
    try:
        switched = switch()
    except ConvragError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}{still}")
        return pipeline
    console.print(f"[dim]from the next question on, {told}[/dim]")
    return switched


def terminal_reader() -> Callable[[str], str]:
    """How the chat reads a question: ``input``, with GNU readline (or libedit) loaded on a terminal.
    Without it a question pasted over several lines was asked line by line, each an answer of its
    own, and the arrow keys typed escape codes into the question. With it a pasted block is one
    question (bracketed paste), a line can be edited, and the up arrow brings back an earlier
    question (this session's only: nothing is written to disk)."""
    if sys.stdin.isatty():
        try:
            import readline  # noqa: F401  (loading it is what makes input() use it)
        except ImportError:  # Windows' Python has none
            pass
    return input


def chat_loop(source: Pipeline | LivePipeline, read: Callable[[str], str] | None = None, history: Sequence[Message] = ()) -> list[Message]:
    """Read questions until EOF or /quit; the history is the user's questions and convrag's answers,
    starting from ``history`` (a conversation saved with /save, or any --history file). A
    :class:`LivePipeline` source is asked before each turn, so a collection re-indexed during the
    chat is searched at its new version (and the user is told). Ctrl-C while a turn is answered
    stops that turn, which is then not part of the history (as "Stop" in the web chat); at the
    prompt it ends the chat."""
    read = read or terminal_reader()
    pipeline = source if isinstance(source, Pipeline) else source.pipeline
    history = list(history)
    last: PipelineResult | None = None
    ahead = ReadAhead()  # the next prompt's start is read while the user reads the answer and types
    ahead.submit(pipeline, history)  # the first one's too: loading the model and reading its examples take seconds
    if history:
        console.print(f"[dim]going on from {len(history)} earlier message(s); the next question follows them[/dim]")
        if history[-1].speaker == "user":
            console.print("[yellow]caution:[/yellow] the history ends with a question that has no answer; the next question "
                          "is asked after it")
    console.print(f"[dim]{HELP}[/dim]")
    while True:
        try:
            line = read("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if not line:
            continue
        if line in ("/quit", "/exit"):
            break
        if line == "/reset":
            history, last = [], None
            ahead.submit(pipeline, [])
            console.print("[dim]conversation cleared[/dim]")
            continue
        if line == "/help":
            console.print(f"[dim]{HELP}[/dim]")
            continue
        if line == "/save" or line.startswith("/save "):
            save_history(line[len("/save"):].strip(), history)
            continue
        if line == "/collections" or line.startswith("/collections "):
            pipeline = choose_collections(source, pipeline, line[len("/collections"):])
            continue
        if line == "/decline-below" or line.startswith("/decline-below "):
            pipeline = choose_floor(source, pipeline, line[len("/decline-below"):])
            continue
        if line in ("/trace", "/json"):
            if last is None:
                console.print("[dim]no turn yet[/dim]")
            elif line == "/trace":
                print_decisions(last)
            else:
                console.print_json(json.dumps(last.trace.to_dict(), ensure_ascii=False, default=str))
            continue
        # "/again": another attempt at the last answer, sampled (greedy decoding, and the completion
        # cache, would give the same one), replacing it once written, as "Regenerate" in the web chat
        again = line == "/again"
        if again and not history:
            console.print("[dim]no answer to write again yet[/dim]")
            continue
        if _COMMAND.fullmatch(line) and not again:
            console.print(f"[dim]unknown command {line}; {HELP}[/dim]")
            continue
        earlier, question = (history[:-2], history[-2].text) if again else (history, line)
        try:
            if isinstance(source, LivePipeline):
                pipeline, changed = source.current()
                if changed:
                    console.print(f"[dim]re-indexed since the last turn, now searched as they are: {escape(', '.join(changed))}[/dim]")
            last = stream_answer(pipeline, [*earlier, Message("user", question)], task_id=f"chat-{len(earlier) // 2 + 1}",
                                 sampling=Sampling.fresh() if again else None)
        except ConvragError as exc:
            console.print(f"[red]error:[/red] {escape(said(exc))}")
            continue
        except KeyboardInterrupt:
            console.print("[yellow]stopped:[/yellow] the answer was not kept; ask again, or ask another question")
            continue
        print_answer(last)
        history = [*earlier, Message("user", question), Message("agent", last.text)]
        ahead.submit(pipeline, history)
    ahead.stop()
    return history
