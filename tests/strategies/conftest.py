from __future__ import annotations

from convrag.types import Message, Task


def make_task(question: str, exchanges: list[tuple[str, str]] = (), task_id: str = "c1<::>9", domain: str = "clapnq") -> Task:  # type: ignore[assignment]
    history: list[Message] = []
    for user, agent in exchanges:
        history += [Message("user", user), Message("agent", agent)]
    return Task(task_id, "c1", len(exchanges) + 1, domain, question, tuple(history))


CARDINALS = [
    ("Tell me about the Arizona Cardinals.", "The Arizona Cardinals are an NFL team based in Glendale, Arizona. They were founded in Chicago in 1898."),
    ("What stadium do they play in?", "They play their home games at State Farm Stadium in Glendale, which has a retractable roof."),
    ("How do I renew a passport?", "You can renew a US passport by mail with form DS-82 if your old passport is undamaged."),
]
