"""The shared text helpers: content words, normalized forms, and tidied Treebank spacing."""

from convrag.text import content_stems, same_query, some_of, tidy_spacing

CLAPNQ = ("The 2017 Arizona Cardinals season was the franchise 's 98th season in the National Football League , "
          "the 30th in Arizona . It would n't have been mentioned ( in 1928 ) with `` first world war '' , either . The fans ' "
          "vote was seen as ' good ' , not ' the best ' ; most call it ' tennis ' .")


def test_treebank_spacing_is_put_back_as_written():
    assert tidy_spacing(CLAPNQ) == ("The 2017 Arizona Cardinals season was the franchise's 98th season in the National "
                                    "Football League, the 30th in Arizona. It would n't have been mentioned (in 1928) "
                                    'with "first world war", either. The fans\' vote was seen as \'good\', not \'the best\'; most call it \'tennis\'.')
    assert content_stems(tidy_spacing(CLAPNQ)) == content_stems(CLAPNQ)  # the words, and so support, are unchanged


def test_ordinary_text_is_left_as_it_is():
    for text in ('Official websites use .gov\n A .gov website belongs to an official government organization.',
                 '\n"max_cores" : "15" , then run `ibmcloud ks cluster ls` .',  # one sign is not enough
                 "It costs $5.00 (about 4 EUR), see https://x.y/z?a=1. Done!", ""):
        assert tidy_spacing(text) == text


def test_same_query_ignores_case_punctuation_and_spacing():
    assert same_query("Where do the Cardinals play?", " where do the cardinals  play ")
    assert not same_query("Where do the Cardinals play?", "Where do the Cardinals live?")


def test_sentences_split_on_many_threads_are_the_ones_split_on_one() -> None:
    """One pysbd segmenter was shared by every thread, and it keeps the text it splits on itself:
    concurrent turns of the service split each other's passages (a 6-sentence passage came back
    as 1), so the answer prompt showed the wrong sentences."""
    from concurrent.futures import ThreadPoolExecutor

    from convrag.text import content_stems, split_sentences

    texts = [" ".join(f"Passage {i} says fact {j} about harbour number {i * j}, Dr. Lee noted." for j in range(2 + i % 7))
             for i in range(120)]
    alone = [(split_sentences(t), content_stems(t)) for t in texts]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda t: (split_sentences(t), content_stems(t)), texts * 3))
    assert together == alone * 3


def test_a_paragraph_wrapped_in_quotes_is_split_into_its_sentences() -> None:
    """pysbd ends no sentence inside double quotes: a passage wrapped whole in them (a quarter of
    MT-RAG's fiqa passages, with "" for a quote inside) came out as one sentence, and the answer
    prompt showed all of it for its best sentence."""
    from convrag.text import sentence_pieces, split_sentences

    passage = ('\n"Is a small amount enough to begin investing with? Yes. You can open an account at a brokerage '
               "with it. I would not buy single shares of companies at this point. I would spread it over two or three "
               "index funds instead. "
               'Read up on asset allocation before you choose. I recommend ""The Four Pillars"" by a well-known author."')
    assert split_sentences(passage) == [
        '"Is a small amount enough to begin investing with?', "Yes.", "You can open an account at a brokerage with it.",
        "I would not buy single shares of companies at this point.", "I would spread it over two or three index funds instead.",
        "Read up on asset allocation before you choose.", 'I recommend ""The Four Pillars"" by a well-known author."']
    assert "".join(sentence_pieces(passage)) == passage.lstrip("\n")  # as written
    curly = passage.replace('\n"', "\u201c").replace('."', ".\u201d")
    assert len(split_sentences(curly)) == 7
    # a short quoted remark stays inside its sentence
    assert split_sentences('The guide says "Fees vary. Ask first." and moves on. Then it lists the funds.') == [
        'The guide says "Fees vary. Ask first." and moves on.', "Then it lists the funds."]


def test_some_of_names_the_first_and_counts_the_rest() -> None:
    assert some_of(["a", "b"]) == "a, b"
    assert some_of(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    assert some_of(["a", "b", "c"], 2) == "a, b and 1 more"
