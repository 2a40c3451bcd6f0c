"""Loading the local model leaves the process's output alone (convrag.llm.llama_output)."""

import subprocess
import sys
from pathlib import Path

# A thread loads the real model, as the chat's and the service's read-ahead does at start, while
# the main thread writes numbered lines, as the chat answers a command typed meanwhile.
WRITER = """
import logging, sys, threading, time
from pathlib import Path
from convrag.llm.local import LocalLLM

logging.basicConfig(filename=sys.argv[2], level=logging.DEBUG)
llm = LocalLLM(Path(sys.argv[1]), n_ctx=512, slots=1)
loaded = threading.Event()
threading.Thread(target=lambda: (llm.open_context(), loaded.set())).start()
written = 0
while not loaded.is_set():
    written += 1
    print(f"line {written}", flush=True)
    time.sleep(0.001)
print(f"written {written}", flush=True)
"""


def test_what_another_thread_writes_while_the_model_loads_arrives(model_path: Path, tmp_path: Path) -> None:
    """llama-cpp-python pointed file descriptors 1 and 2 at /dev/null while it loaded a model: in
    `convrag chat`, a /collections typed in the seconds the read-ahead loaded the model was answered
    into nothing, and so was everything after it until the load ended."""
    log = tmp_path / "log.txt"
    run = subprocess.run([sys.executable, "-c", WRITER, str(model_path), str(log)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    *lines, last = run.stdout.splitlines()
    written = int(last.removeprefix("written "))
    assert written > 0 and lines == [f"line {n}" for n in range(1, written + 1)]
    assert run.stderr == ""  # llama.cpp's own lines are not shown ...
    assert "convrag.llm.llama_cpp" in log.read_text()  # ... they go to the log, at debug level
