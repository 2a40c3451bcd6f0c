import pytest

from convrag.history import Budget, pair_lines, render_context, topical, turn_pairs
from convrag.types import Message


def count(text: str) -> int:
    return len(text.split())


def test_turn_pairs_group_exchanges():
    pairs = turn_pairs([Message("user", "a"), Message("agent", "b"), Message("user", "c"), Message("agent", "d")])
    assert [(p.turn, p.user, p.agent) for p in pairs] == [(1, "a", "b"), (2, "c", "d")]
    assert pairs[0].text == "User: a Assistant: b"


def test_history_without_user_turn_or_with_consecutive_user_messages():
    assert [(p.user, p.agent) for p in turn_pairs([Message("agent", "Welcome!")])] == [("", "Welcome!")]
    pairs = turn_pairs([Message("user", "a"), Message("user", "b")])
    assert [(p.user, p.agent) for p in pairs] == [("a", ""), ("b", "")]


def test_long_answers_are_clipped():
    lines = pair_lines(turn_pairs([Message("user", "q"), Message("agent", "word " * 200)])[0], answer_words=10)
    assert lines[1].endswith("…") and count(lines[1]) == 12  # "Assistant:" + 10 words + ellipsis


def test_no_answer_words_keeps_the_users_side_only():
    pair = turn_pairs([Message("user", "Which plans are there?"), Message("agent", "Lite and Standard.")])[0]
    assert pair_lines(pair, answer_words=0) == ["User: Which plans are there?"]


def test_oldest_turns_are_dropped_to_fit_the_budget():
    blocks = [[f"User: question {i} " + "x " * 20] for i in range(10)]
    text, dropped = render_context(blocks, count, Budget(tokens=70))
    assert count(text) <= 70 and dropped == 7
    assert "question 9" in text and "question 2" not in text


def test_a_single_block_over_budget_is_cut():
    text, dropped = render_context([["User: " + "y " * 500]], count, Budget(tokens=50))
    assert dropped == 0 and count(text) <= 51


def _starts(step: int, turns: int = 12) -> list[int]:
    """Blocks dropped at each turn of a growing conversation (23 words per block, 70-word budget)."""
    blocks = [[f"User: question {i} " + "x " * 20] for i in range(turns)]
    return [render_context(blocks[:n], count, Budget(tokens=70, step=step))[1] for n in range(1, turns + 1)]


def test_a_stepped_window_moves_its_start_only_every_few_turns():
    # one at a time, the window's start moves on every turn once the budget is full ...
    assert _starts(1) == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    # ... three at a time, it stays put for three turns, so each turn's history extends the last one's
    stepped = _starts(3)
    assert stepped == [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 9]
    blocks = [[f"User: question {i} " + "x " * 20] for i in range(12)]
    before, _ = render_context(blocks[:4], count, Budget(tokens=70, step=3))
    after, _ = render_context(blocks[:5], count, Budget(tokens=70, step=3))
    assert after.startswith(before)
    assert all(count(render_context(blocks[:n], count, Budget(tokens=70, step=3))[0]) <= 70 for n in range(1, 13))


def test_a_step_below_one_is_refused():
    with pytest.raises(ValueError, match="step"):
        Budget(step=0)



def _scanned_from_the_start(blocks, count_tokens, budget):  # type: ignore[no-untyped-def]
    """render_context as it was: the whole remaining text counted once per dropped block."""
    kept, dropped = list(blocks), 0
    text = "\n".join(line for block in kept for line in block)
    while len(kept) > 1 and count_tokens(text) > budget.tokens:
        n = min(budget.step, len(kept) - 1)
        del kept[:n]
        dropped += n
        text = "\n".join(line for block in kept for line in block)
    return text, dropped


def test_a_long_history_renders_as_it_did_with_work_in_proportion_to_its_length(embedder) -> None:  # type: ignore[no-untyped-def]
    """Rendering counted the whole remaining history once per exchange it dropped: a 2,000-exchange
    `--history` took 70 s to render, 5,000 took 10 minutes, and a long chat slowed every turn."""
    import random

    from convrag.history import TurnPair

    def wordpiece(text: str) -> int:
        return len(embedder.tokenizer.encode(text, add_special_tokens=False, verbose=False))

    rng = random.Random(7)
    words = "parking fee museum weekend pass renewal mail how much does it cost the a of [1] 42".split()
    for trial in range(60):
        budget = Budget(tokens=rng.choice([5, 40, 120, 600]), answer_words=rng.choice([0, 8, 80]), step=rng.randint(1, 4))
        blocks = [pair_lines(TurnPair(i + 1, " ".join(rng.choices(words, k=rng.randint(0, 12))),
                                      " ".join(rng.choices(words, k=rng.randint(0, 30)))), budget.answer_words)
                  for i in range(rng.randint(0, 120))]
        for counter in (wordpiece, count):
            text, dropped = render_context(blocks, counter, budget)
            expected, expected_dropped = _scanned_from_the_start(blocks, counter, budget)
            assert dropped == expected_dropped, trial
            assert text == expected or (len(blocks) - dropped == 1 and counter(expected) > budget.tokens), trial

    long = [[f"User: question {i} about the parking fee?", f"Assistant: it costs {i} dollars on weekends [1]."] for i in range(1500)]
    assert render_context(long, count, Budget(tokens=600)) == _scanned_from_the_start(long, count, Budget(tokens=600))
    read: list[int] = []

    def counted(text: str) -> int:
        read.append(len(text))
        return wordpiece(text)

    render_context(long, counted, Budget(tokens=600))
    assert sum(read) < 3 * len("\n".join(line for block in long for line in block))  # from the start: ~700x that


def test_social_exchanges_are_left_out_of_the_context_their_turn_numbers_kept():
    """After "Thanks!" the last exchange was the thanks, all the progressive rewrite reads, so "Can I
    carry any over?" lost what "any" stands for."""
    history = [Message("user", "How many days of leave do I get?"), Message("agent", "25 days [1]."),
               Message("user", "Thanks, that's helpful!"), Message("agent", "You're welcome!"),
               Message("user", "What about sick leave?"), Message("agent", "20 days at full pay [1].")]
    pairs = turn_pairs(history[:4])
    assert [(p.turn, p.user) for p in pairs] == [(1, "How many days of leave do I get?")]
    assert [p.turn for p in turn_pairs(history)] == [1, 3]
    assert topical(history) == history[:2] + history[4:]
