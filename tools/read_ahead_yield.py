"""How long does a question wait when it arrives while the model reads a prompt ahead?

After an answer, ``convrag serve`` and ``convrag chat`` read the start of that conversation's next
answer prompt (instructions, worked examples, the conversation so far) while the user reads. A
question that arrives meanwhile, from the same user or from another conversation on the same
server, needs the model. Read in one go, the start makes it wait for all of it; read
``read_ahead_chunk`` tokens at a time (the default, :data:`convrag.llm.local.READ_AHEAD_CHUNK`),
the read stops after the piece in progress and the question takes the model.

For each piece size this measures, on the local model with the bundled sample's two longest
conversations (history up to the fifth question, that turn's passages):

- the read-ahead alone: its tokens, seconds and tokens per second (smaller pieces cost llama.cpp
  some batch efficiency);
- a question of the *same* conversation sent ``--after`` seconds into the read: seconds from
  sending it to its first token (one token is asked for, so that is the whole request). The read
  was reading this question's own prompt, so stopping it only moves the work to the request;
- a question of *another* conversation sent at the same moment: what it pays for a read that is
  not its own (only the instructions and worked examples, which every answer prompt starts with,
  are of use to it: its request continues from the slot the read filled).

References: each question sent with nothing in progress, and the same-conversation question after a
finished read.

With ``--stop``, it measures instead what reading a whole answer prompt in pieces costs and buys: a
turn streamed with a stop (as the service, the terminal chat and ``eval-answers`` stream one) has
the model read its prompt ``stop_chunk`` tokens at a time (:data:`convrag.llm.local.STOP_CHUNK`),
looking at the stop between pieces.
For each repeat, on a fresh model: the prompt's first token read in one call and in pieces (the
order alternates between repeats), and how long after a stop pressed ``--after`` s into the read
the stream ends.

    .venv/bin/python tools/read_ahead_yield.py [--after 1.0] [--repeats 1] [--pieces 0,256,64]
    .venv/bin/python tools/read_ahead_yield.py --stop [--after 1.0] [--repeats 3] [--pieces 0,512,256,128,64]

Run it alone on the machine: it times the model.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import threading
import time
from pathlib import Path

import convrag
from convrag.bench.timing import machine_description
from convrag.data.conversations import Conversation, load_conversations
from convrag.eval.report import markdown_table
from convrag.generate.answer import cited_messages, cited_prompt_start
from convrag.history import Budget
from convrag.llm.base import ChatMessage, GenerationParams
from convrag.llm.local import READ_AHEAD_CHUNK, STOP_CHUNK, LocalLLM

SAMPLE = Path(convrag.__file__).parent / "sample" / "mtrag" / "conversations.json"
ONE_TOKEN = GenerationParams(max_tokens=1)
HISTORY = Budget(400, 60)  # the default answer prompt's history budget


@functools.cache
def _longest_first() -> list[Conversation]:
    """The sample's conversations, longest first (read once, not once per measurement)."""
    return sorted(load_conversations(SAMPLE), key=lambda c: -len(c.messages))


def _prompts(llm: LocalLLM, rank: int = 0) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """The start a read-ahead reads and the whole prompt the question then sends, for the sample's
    ``rank``-th longest conversation."""
    conversation = _longest_first()[rank]
    task = conversation.tasks()[4]
    index = sum(1 for m in task.history if m.speaker == "agent")
    passages = conversation.agent_contexts[index][:3] if index < len(conversation.agent_contexts) else ()
    block = "\n".join(f"[{i}] ({p.title or p.doc_id}) {' '.join(p.text.split()[:90])}" for i, p in enumerate(passages, 1))
    start = cited_prompt_start(task.history, HISTORY, llm.count_tokens)
    return start, cited_messages(task.question, task.history, block, HISTORY, llm.count_tokens)


def _fresh(chunk: int | None, stop_chunk: int | None = STOP_CHUNK) -> LocalLLM:
    """A model as a running server has it: loaded, its slots made (making a slot takes a second or
    more, and a question sent meanwhile would find the read not yet begun)."""
    llm = LocalLLM(n_ctx=4096, slots=2, read_ahead_chunk=chunk, stop_chunk=stop_chunk)
    llm.complete([{"role": "user", "content": "Say yes."}], ONE_TOKEN)  # loads the model, makes the first slot
    llm._new_slot()
    return llm


def read_alone(chunk: int | None) -> tuple[int, float]:
    llm = _fresh(chunk)
    start, _ = _prompts(llm)
    began = time.perf_counter()
    tokens = llm.prefill(start)
    return tokens, time.perf_counter() - began


def wait_during_read(chunk: int | None, after: float, other: bool) -> tuple[float, int]:
    """Seconds from sending the question to its answer, and tokens the read had done."""
    llm = _fresh(chunk)
    start, full = _prompts(llm)
    if other:
        full = _prompts(llm, rank=1)[1]
    read: list[int] = []
    reader = threading.Thread(target=lambda: read.append(llm.prefill(start)))
    reader.start()
    time.sleep(after)
    sent = time.perf_counter()
    llm.complete(full, ONE_TOKEN)
    waited = time.perf_counter() - sent
    reader.join()
    return waited, read[0]


def reference(rank: int, read_first: bool) -> float:
    llm = _fresh(READ_AHEAD_CHUNK)
    start, full = _prompts(llm, rank)
    if read_first:
        llm.prefill(start)
    sent = time.perf_counter()
    llm.complete(full, ONE_TOKEN)
    return time.perf_counter() - sent


def first_token(chunk: int | None) -> tuple[int, float]:
    """The whole answer prompt's tokens, and seconds to its first token on a fresh model: read in
    one llama.cpp call (``chunk`` None), or in pieces of ``chunk`` tokens with a stop nobody presses."""
    from convrag.llm.base import stream

    llm = _fresh(READ_AHEAD_CHUNK, stop_chunk=chunk)  # stop_chunk None: a stop is not looked at while the prompt is read
    _, full = _prompts(llm)
    began = time.perf_counter()
    *_, completion = stream(llm, full, ONE_TOKEN, lambda: False)
    return completion.prompt_tokens, time.perf_counter() - began


def stopped_after(after: float, chunk: int | None) -> float:
    """Seconds from a stop pressed ``after`` s into the answer prompt's read to the stream's end."""
    from convrag.llm.base import stream

    llm = _fresh(READ_AHEAD_CHUNK, stop_chunk=chunk)
    _, full = _prompts(llm)
    pressed = threading.Event()
    at: list[float] = []
    threading.Timer(after, lambda: (at.append(time.perf_counter()), pressed.set())).start()
    for _ in stream(llm, full, ONE_TOKEN, pressed.is_set):
        if pressed.is_set():  # what a caller without a stoppable backend does: look between pieces
            break
    return time.perf_counter() - at[0]


def stop_costs(after: float, repeats: int, chunks: list[int | None]) -> None:
    median = statistics.median
    runs: dict[int | None, list[tuple[int, float]]] = {chunk: [] for chunk in chunks}
    for i in range(repeats):  # the order turns each repeat, so that the host's drift falls on all
        for chunk in chunks[i % len(chunks):] + chunks[: i % len(chunks)]:
            runs[chunk].append(first_token(chunk))
    rows = [["one call" if chunk is None else f"{chunk}-token pieces, a stop looked at between them", timed[0][0],
             f"{median(s for _, s in timed):.2f}", f"{median(stopped_after(after, chunk) for _ in range(repeats)):.2f}"]
            for chunk, timed in runs.items()]
    print(machine_description())
    print(markdown_table(["answer prompt read", "prompt tokens", f"first token, s (median of {repeats})",
                          f"a stop pressed {after:g} s in: the stream ends after, s"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", type=float, default=1.0, help="seconds into the read at which the question is sent")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--pieces", default=f"0,256,{READ_AHEAD_CHUNK}", help="piece sizes to compare, 0 = the whole start at once")
    parser.add_argument("--stop", action="store_true", help="measure a whole answer prompt read in pieces with a stop instead")
    args = parser.parse_args()
    if args.stop:
        stop_costs(args.after, args.repeats, [int(p) or None for p in args.pieces.split(",")])
        return
    median = statistics.median
    rows = []
    for piece in (int(p) for p in args.pieces.split(",")):
        chunk = piece or None
        reads = [read_alone(chunk) for _ in range(args.repeats)]
        same = [wait_during_read(chunk, args.after, other=False) for _ in range(args.repeats)]
        other = [wait_during_read(chunk, args.after, other=True) for _ in range(args.repeats)]
        tokens, seconds = reads[0][0], median(s for _, s in reads)
        rows.append([
            "whole start at once" if chunk is None else f"{chunk} tokens",
            tokens, f"{seconds:.2f}", f"{tokens / seconds:.0f}",
            f"{median(w for w, _ in same):.2f}", f"{median(w for w, _ in other):.2f}",
            f"{median(r for _, r in other):.0f}",
        ])
    print(machine_description())
    print(markdown_table(["read-ahead pieces", "start tokens", "read alone, s", "tokens/s",
                          f"same conversation's question, sent {args.after:g} s in: wait, s",
                          "another conversation's question: wait, s", "tokens read before it"], rows))
    cold_same = median(reference(0, False) for _ in range(args.repeats))
    cold_other = median(reference(1, False) for _ in range(args.repeats))
    warm = median(reference(0, True) for _ in range(args.repeats))
    print(f"\nreferences (median of {args.repeats}), nothing in progress: same conversation's question {cold_same:.2f} s "
          f"({warm:.2f} s after a finished read), another conversation's question {cold_other:.2f} s")


if __name__ == "__main__":
    main()
