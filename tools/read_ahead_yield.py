"""How long does a question wait when it arrives while the model reads the next prompt ahead?

After an answer, ``convrag serve`` and ``convrag chat`` read the start of the next answer prompt
(instructions, worked examples, the conversation so far) while the user reads. A user who types
fast sends the next question while that read is in progress. Read in one go, the question waits
for all of it; read ``read_ahead_chunk`` tokens at a time (the default,
:data:`convrag.llm.local.READ_AHEAD_CHUNK`), the read stops after the piece in progress and the
question takes the model.

For each piece size this measures, on the local model with the bundled sample's longest
conversation (history up to its fifth question) and that turn's passages:

- ``read`` - the read-ahead alone: its tokens, seconds and tokens per second (smaller pieces
  cost llama.cpp some batch efficiency);
- ``wait`` - a question sent ``--after`` seconds into the read: seconds from sending it to its
  first token (one token is asked for, so that is the whole request), and how much of the start
  the read had done.

Two references: the question sent cold (nothing read ahead) and after a finished read.

    .venv/bin/python tools/read_ahead_yield.py [--after 1.0] [--repeats 3]

Run it alone on the machine: it times the model.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path

import convrag
from convrag.data.conversations import load_conversations
from convrag.eval.report import markdown_table
from convrag.generate.answer import cited_messages, cited_prompt_start
from convrag.history import Budget
from convrag.llm.base import ChatMessage, GenerationParams
from convrag.llm.local import READ_AHEAD_CHUNK, LocalLLM

SAMPLE = Path(convrag.__file__).parent / "sample" / "mtrag" / "conversations.json"
ONE_TOKEN = GenerationParams(max_tokens=1)
HISTORY = Budget(400, 60)  # the default answer prompt's history budget


def _prompts(llm: LocalLLM) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """The start the read-ahead reads and the whole prompt the question then sends."""
    conversation = max(load_conversations(SAMPLE), key=lambda c: len(c.messages))
    task = conversation.tasks()[4]
    index = sum(1 for m in task.history if m.speaker == "agent")
    passages = conversation.agent_contexts[index][:3] if index < len(conversation.agent_contexts) else ()
    block = "\n".join(f"[{i}] ({p.title or p.doc_id}) {' '.join(p.text.split()[:90])}" for i, p in enumerate(passages, 1))
    start = cited_prompt_start(task.history, HISTORY, llm.count_tokens)
    return start, cited_messages(task.question, task.history, block, HISTORY, llm.count_tokens)


def _fresh(chunk: int | None) -> LocalLLM:
    return LocalLLM(n_ctx=4096, slots=1, read_ahead_chunk=chunk)


def read_alone(chunk: int | None) -> tuple[int, float]:
    llm = _fresh(chunk)
    start, _ = _prompts(llm)
    llm.complete([{"role": "user", "content": "Say yes."}], ONE_TOKEN)  # load the model outside the timing
    began = time.perf_counter()
    tokens = llm.prefill(start)
    return tokens, time.perf_counter() - began


def wait_during_read(chunk: int | None, after: float) -> tuple[float, int]:
    """Seconds from sending the question to its answer, and tokens the read had done."""
    llm = _fresh(chunk)
    start, full = _prompts(llm)
    llm.complete([{"role": "user", "content": "Say yes."}], ONE_TOKEN)
    read: list[int] = []
    reader = threading.Thread(target=lambda: read.append(llm.prefill(start)))
    reader.start()
    time.sleep(after)
    sent = time.perf_counter()
    llm.complete(full, ONE_TOKEN)
    waited = time.perf_counter() - sent
    reader.join()
    return waited, read[0]


def reference(read_first: bool) -> float:
    llm = _fresh(READ_AHEAD_CHUNK)
    start, full = _prompts(llm)
    llm.complete([{"role": "user", "content": "Say yes."}], ONE_TOKEN)
    if read_first:
        llm.prefill(start)
    sent = time.perf_counter()
    llm.complete(full, ONE_TOKEN)
    return time.perf_counter() - sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", type=float, default=1.0, help="seconds into the read at which the question is sent")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    median = statistics.median
    rows = []
    for chunk in (None, 256, READ_AHEAD_CHUNK, 32):
        reads = [read_alone(chunk) for _ in range(args.repeats)]
        waits = [wait_during_read(chunk, args.after) for _ in range(args.repeats)]
        tokens, seconds = reads[0][0], median(s for _, s in reads)
        rows.append([
            "whole start at once" if chunk is None else f"{chunk} tokens",
            tokens, f"{seconds:.2f}", f"{tokens / seconds:.0f}",
            f"{median(w for w, _ in waits):.2f}", f"{median(r for _, r in waits):.0f}",
        ])
    print(markdown_table(["read-ahead pieces", "start tokens", "read alone, s", "tokens/s",
                          f"question sent {args.after:g} s into the read: wait, s", "tokens read before it"], rows))
    cold = median(reference(False) for _ in range(args.repeats))
    warm = median(reference(True) for _ in range(args.repeats))
    print(f"\nreferences (median of {args.repeats}): question with nothing read ahead {cold:.2f} s; after a finished read {warm:.2f} s")


if __name__ == "__main__":
    main()
