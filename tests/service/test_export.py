from convrag.service.export import conversation_markdown


def test_headings_and_sources_stay_on_their_line():
    # a question asked over several lines left its heading after the first; so did a title with a line break
    conversation = {"title": "Boat\nfees", "collections": ["harbour"], "strategy": "progressive", "created": 0.0, "turns": [
        {"question": "How much do boats pay?\nAnd larger ones?", "created": 60.0, "answer": "Boats pay 5 dollars a night [1].\n\n- Larger: 10 [1].",
         "citations": [{"number": 1, "title": "Marina\nfees 2024", "passage_id": "fees#0", "collection": "harbour", "url": ""}]},
    ]}
    lines = conversation_markdown(conversation).splitlines()
    assert lines[0] == "# Boat fees" and "## 1. How much do boats pay? And larger ones?" in lines
    assert "- [1] Marina fees 2024 — harbour" in lines
    assert "Boats pay 5 dollars a night [1]." in lines and "- Larger: 10 [1]." in lines  # the answer keeps its own lines
