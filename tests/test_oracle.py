"""Oracle labels: PreSumm's greedy selection and BBC's verbatim matches."""
from training.oracle import greedy_selection, verbatim_labels


def test_greedy_picks_the_sentences_that_cover_the_reference():
    doc = ["the cat sat on the mat .", "stocks fell sharply on monday .",
           "it was a sunny day .", "the dog chased the cat ."]
    ref = ["the cat sat on the mat", "the dog chased the cat"]
    assert greedy_selection(doc, ref, 3) == [0, 3]  # the unrelated ones would lower ROUGE: not added


def test_greedy_stops_at_k_and_returns_document_order():
    doc = [f"word{i} shared{i} tokens{i} here{i} ." for i in range(6)]
    ref = [doc[5], doc[1], doc[3], doc[0]]
    sel = greedy_selection(doc, ref, 3)
    assert len(sel) == 3 and sel == sorted(sel) and set(sel) <= {0, 1, 3, 5}


def test_greedy_ignores_punctuation_and_handles_no_overlap():
    assert greedy_selection(["a b c d e !"], ["a b c d e"], 3) == [0]
    assert greedy_selection(["x y z ."], ["a b c"], 3) == []
    assert greedy_selection([], ["a b c"], 3) == []


def test_greedy_is_the_greedy_not_the_exhaustive_optimum():
    # sentence 0 alone scores best, so it is taken first even though 1+2 together cover more
    doc = ["a b c d", "a b x y", "c d z w"]
    ref = ["a b c d x y z w"]
    assert greedy_selection(doc, ref, 1) == [0]


def test_verbatim_labels_match_whole_sentences_only():
    sents = ["First sentence here.", "Second one.", "Third sentence."]
    summary = "First sentence here.Third sentence."  # BBC concatenates without spaces
    assert verbatim_labels(sents, summary) == [1, 0, 1]
    assert verbatim_labels(["  ", "First"], summary) == [0, 1]
