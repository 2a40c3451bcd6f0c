"""Run a `convrag` command with the local backend built with other llama.cpp settings, to compare
them on the same host (docs/benchmarks.md, "Flash attention"):

    .venv/bin/python tools/local_backend_variant.py --flash-attn -- eval-answers --split dev ...
    .venv/bin/python tools/local_backend_variant.py --no-flash-attn -- eval-answers --split dev ...

Everything after ``--`` is the `convrag` command line, unchanged. The setting is passed to every
:class:`convrag.llm.local.LocalLLM` the command makes through the backend registry.
"""

from __future__ import annotations

import argparse
import sys

from convrag.llm import registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flash-attn", action=argparse.BooleanOptionalAction, required=True,
                        help="llama.cpp's fused attention kernel on or off")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the convrag command line, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the convrag command after --")

    build = registry.LLM_BACKENDS["local"]  # the registry's own builder, with one option more
    registry.LLM_BACKENDS["local"] = lambda arg, options: build(arg, {**options, "flash_attn": args.flash_attn})
    from convrag.cli.main import main as convrag

    sys.argv = ["convrag", *command]
    convrag()


if __name__ == "__main__":
    main()
