"""The reference metrics (scoring/reference.py): each formula against an oracle written
differently here (token F1 by removing matches from a list, the longest common subsequence by
the plain dynamic programme, chrF by sacrebleu itself), values worked out by hand, the edge
cases, and totality on any text."""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc
import unicodedata
from collections.abc import Callable, Sequence

import pytest
import sacrebleu
from evalsvc.models.datasets import MAX_TEXT_CHARS
from evalsvc.scoring import reference
from evalsvc.scoring.checks import Score
from evalsvc.scoring.reference import (
    chrf,
    exact_match,
    lcs_length,
    norm,
    rouge_l,
    token_f1,
    tokens,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

METRICS = [exact_match, token_f1, rouge_l, chrf]

# Any code point, lone surrogates, NULs and control characters included.
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=200)
# Words from a few, so that outputs and references share some; punctuation, articles, case
# and odd whitespace around them.
WORDY_TEXT = st.lists(
    st.sampled_from(
        ["cat", "Cat", "mat", "sat", "the", "A", "an", "on", "«on»", "¿mat?", "x", "x.", "Æ"]
    ),
    max_size=30,
).flatmap(
    lambda words: st.lists(
        st.sampled_from([" ", "  ", "\t", "\n", "\xa0", "\u3000"]),
        min_size=len(words),
        max_size=len(words),
    ).map(lambda gaps: "".join(w + g for w, g in zip(words, gaps, strict=True)))
)
TEXTS = st.one_of(WORDY_TEXT, ANY_TEXT)


def assert_usable(score: Score) -> None:
    assert isinstance(score.value, float)
    assert math.isfinite(score.value) and 1.0 <= score.value <= 5.0
    assert score.reason.strip()
    score.reason.encode("utf-8")  # storable: no lone surrogate


# ---- the oracles ------------------------------------------------------------------------------


def oracle_words(text: str) -> list[str]:
    """Normalised words, the other way round: split first, then strip each word."""
    found = []
    for raw in text.lower().split():
        word = "".join(c for c in raw if unicodedata.category(c)[0] != "P")
        if word and word not in ("a", "an", "the"):
            found.append(word)
    return found


def oracle_f(common: int, n_output: int, n_reference: int) -> float:
    if n_output == 0 and n_reference == 0:
        return 1.0
    if common == 0:
        return 0.0
    precision, recall = common / n_output, common / n_reference
    return 2 * precision * recall / (precision + recall)


def oracle_common(output: list[str], reference: list[str]) -> int:
    """Words shared as a multiset: each output word takes one unused copy from the reference."""
    unused = list(reference)
    common = 0
    for word in output:
        if word in unused:
            unused.remove(word)
            common += 1
    return common


def dp_lcs(first: Sequence[object], second: Sequence[object]) -> int:
    """The textbook O(n m) table, one row at a time."""
    previous = [0] * (len(second) + 1)
    for x in first:
        row = [0]
        for j, y in enumerate(second):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
        previous = row
    return previous[-1]


def on_scale(fraction: float) -> float:
    return round(1 + 4 * fraction, 4)


# ---- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Cat", "cat"),
        ("  a   cat\tsat\non\xa0the\u3000mat  ", "cat sat on mat"),
        ("An apple. THE END!", "apple end"),
        ("«Bonjour», dit-il.", "bonjour ditil"),
        ("“the” answer", "answer"),
        ("¿Qué?", "qué"),
        ("東京、大阪。", "東京大阪"),  # punctuation is dropped, not read as a space
        ("don't", "dont"),
        ("theatre another anthem", "theatre another anthem"),  # articles only as whole words
        ("a.", ""),  # "a." loses its full stop first, then is an article
        ("$5 + 3 = 8", "$5 + 3 = 8"),  # symbols (S*) are not punctuation (P*)
        ("...!?", ""),
        ("", ""),
    ],
)
def test_norm(text: str, normalised: str) -> None:
    assert norm(text) == normalised
    assert tokens(text) == normalised.split()


@given(TEXTS)
def test_norm_agrees_with_its_oracle(text: str) -> None:
    assert tokens(text) == oracle_words(text)
    assert norm(text) == " ".join(oracle_words(text))
    assert norm(norm(text)) == norm(text)


# ---- exact match ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Paris", "paris"),
        ("The Eiffel Tower.", "eiffel tower"),
        ("«Paris»", "“Paris”"),
        ("¿Paris?", "Paris"),
        ("東京、", "東京"),
        ("an  answer\n", "The answer"),
        ("", ""),
        ("!!!", "the"),
    ],
)
def test_exact_match_ignores_case_punctuation_articles_and_spacing(
    output: str, expected: str
) -> None:
    assert exact_match(output, expected) == Score(
        5.0, "output matches the reference (after normalising case, punctuation and articles)"
    )


@pytest.mark.parametrize(
    ("output", "expected", "reason"),
    [
        (
            "Paris, France",
            "Lyon, France",
            "output differs from the reference: first difference at word 1: 'paris' vs 'lyon'",
        ),
        (
            "the cat sat",
            "the cat sat down",
            "output differs from the reference: the output ends before word 3, where the "
            "reference goes on with 'down'",
        ),
        (
            "cat sat down here",
            "cat sat",
            "output differs from the reference: the output goes on at word 3 with 'down', after "
            "the reference ends",
        ),
        (
            "",
            "Paris",
            "output differs from the reference: the output has no words after normalising "
            "case, punctuation and articles; the reference starts 'paris'",
        ),
        (
            "Paris",
            "the",
            "output differs from the reference: the reference has no words after normalising "
            "case, punctuation and articles; the output starts 'paris'",
        ),
        ("Paris 7", "Paris 8", "output differs from the reference: first difference at word 2"),
    ],
)
def test_exact_match_says_where_the_texts_differ(output: str, expected: str, reason: str) -> None:
    score = exact_match(output, expected)
    assert score.value == 1.0
    assert score.reason.startswith(reason)


def test_exact_match_previews_are_short_and_storable() -> None:
    score = exact_match("x" * 500 + " \ud800", "y" * 500)
    previews = score.reason.split(": ")[-1].split(" vs ")
    assert [len(p) for p in previews] == [40, 40]
    assert previews[0] == "'" + "x" * 35 + "...'"
    score = exact_match("cat \ud800\x00", "cat dog")
    assert score.reason.endswith("word 2: '\\ud800\\x00' vs 'dog'")
    score.reason.encode("utf-8")


# ---- token F1 and ROUGE-L ---------------------------------------------------------------------


@given(TEXTS, TEXTS)
def test_token_f1_agrees_with_its_oracle(output: str, expected: str) -> None:
    got, wanted = oracle_words(output), oracle_words(expected)
    f1 = oracle_f(oracle_common(got, wanted), len(got), len(wanted))
    assert token_f1(output, expected).value == pytest.approx(on_scale(f1), abs=1e-6)


SMALL = st.lists(st.sampled_from("xyz"), max_size=80)
MIXED = st.lists(st.one_of(st.sampled_from("xyz"), st.sampled_from("abcdefghij")), max_size=60)


@settings(max_examples=300)
@given(st.one_of(SMALL, MIXED), st.one_of(SMALL, MIXED))
def test_lcs_agrees_with_the_dynamic_programme(first: list[str], second: list[str]) -> None:
    # Lists of up to 80 from 3 words reach the kept masks (16 occurrences or more), the mixed
    # ones the masks rebuilt from positions (by shifts under 8 occurrences, from bytes above).
    assert lcs_length(first, second) == dp_lcs(first, second)
    assert lcs_length(second, first) == lcs_length(first, second)


@pytest.mark.parametrize(("frequent", "few"), [(1, 1), (2, 2), (10**9, 2), (10**9, 10**9)])
@given(first=st.lists(st.integers(0, 4), max_size=40), second=st.lists(st.integers(0, 4)))
def test_lcs_is_the_same_whichever_masks_are_kept_or_rebuilt(
    frequent: int, few: int, first: list[int], second: list[int]
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reference, "FREQUENT", frequent)
        patch.setattr(reference, "FEW", few)
        assert lcs_length(first, second) == dp_lcs(first, second)


@given(TEXTS, TEXTS)
def test_rouge_l_agrees_with_its_oracle(output: str, expected: str) -> None:
    got, wanted = oracle_words(output), oracle_words(expected)
    f = oracle_f(dp_lcs(got, wanted), len(got), len(wanted))
    assert rouge_l(output, expected).value == pytest.approx(on_scale(f), abs=1e-6)


def test_lcs_memory_stays_linear_when_every_word_differs() -> None:
    # One mask per distinct word would hold bits 0..i for the word at i: 20,000 words, about
    # 20,000**2 / 16 bytes = 25 MB. Rare words are kept as positions instead.
    first = [chr(0x4E00 + i) for i in range(20_000)]
    second = first[1:] + first[:1]
    tracemalloc.start()
    try:
        assert lcs_length(first, second) == 19_999
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20


# ---- chrF -------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(TEXTS, TEXTS)
def test_chrf_is_sacrebleus_sentence_chrf(output: str, expected: str) -> None:
    theirs = sacrebleu.sentence_chrf(output, [expected]).score
    assert chrf(output, expected).value == pytest.approx(on_scale(theirs / 100), abs=1e-6)


def test_chrf_names_what_it_measured() -> None:
    score = chrf("the cat sat on the mat", "the cat sat on the mat")
    assert score == Score(
        5.0, "chrF 100.0 of 100 (sacrebleu sentence chrF: character 1- to 6-grams, beta 2)"
    )


def test_sacrebleu_is_imported_on_first_use_only() -> None:
    code = (
        "import sys; from evalsvc.scoring import reference; "
        "assert 'sacrebleu' not in sys.modules, 'imported with the module'; "
        "reference.chrf('a', 'b'); assert 'sacrebleu' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_chrf_that_raises_scores_one_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_output: str, _reference: str) -> float:
        raise ModuleNotFoundError("No module named 'sacrebleu'")

    monkeypatch.setattr(reference, "chrf_score", broken)
    assert chrf("a", "a") == Score(
        1.0,
        "chrf could not be computed for this output (ModuleNotFoundError); it is scored as failing",
    )


def test_chrf_that_is_not_a_number_scores_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "chrf_score", lambda _o, _r: math.nan)
    score = chrf("a", "a")
    assert score.value == 1.0
    assert score.reason.startswith("chrF gave no usable score (nan)")


# ---- values worked out by hand ----------------------------------------------------------------


def test_values_worked_out_by_hand() -> None:
    # "the cat sat on the mat" and "a cat sat on mat" both normalise to "cat sat on mat":
    # every metric on words scores a match.
    for metric in (exact_match, token_f1, rouge_l):
        assert metric("the cat sat on the mat", "a cat sat on mat").value == 5.0

    # output: cat sat on mat (4 words); reference: cat sat on red mat today (6 words).
    # Shared words 4 and longest common subsequence 4 ("cat sat on mat"): P = 4/4, R = 4/6,
    # F = 2 * 1 * 2/3 / (1 + 2/3) = 0.8, so 1 + 4 * 0.8 = 4.2.
    output, expected = "The cat sat on the mat.", "A cat sat on a red mat today"
    assert token_f1(output, expected) == Score(
        4.2,
        "token F1 0.800 (precision 1.000, recall 0.667): 4 words shared, of 4 in the output "
        "and 6 in the reference (after normalising case, punctuation and articles)",
    )
    assert rouge_l(output, expected).value == 4.2
    assert exact_match(output, expected).value == 1.0

    # The same words in another order: F1 is 1, but the longest common subsequence of
    # "mat sat on cat" and "cat sat on mat" is "sat on", 2 of 4: F = 0.5, so 1 + 4 * 0.5 = 3.
    assert token_f1("the mat sat on the cat", "a cat sat on mat").value == 5.0
    assert rouge_l("the mat sat on the cat", "a cat sat on mat") == Score(
        3.0,
        "ROUGE-L F 0.500 (precision 0.500, recall 0.500): the longest common subsequence has "
        "2 words, of 4 in the output and 4 in the reference (after normalising case, "
        "punctuation and articles)",
    )

    # Repeats count once per copy: output "to be or not to be" (6 words), reference "to be"
    # (2): shared 2 (one "to", one "be"), P = 2/6, R = 2/2, F1 = 2 * 1/3 / (4/3) = 0.5: 3.
    assert token_f1("to be or not to be", "to be").value == 3.0
    # "one two three" against "three two one": shared 3 (F1 1), LCS 1: F = 1/3, 2.3333.
    assert rouge_l("one two three", "three two one").value == 2.3333


# ---- edge cases -------------------------------------------------------------------------------

NOTHING = "after normalising case, punctuation and articles"


@pytest.mark.parametrize("metric", [token_f1, rouge_l])
@pytest.mark.parametrize(
    ("output", "expected", "value", "reason"),
    [
        ("", "", 5.0, f"output and reference both have no words {NOTHING}"),
        ("?!…", "the an a", 5.0, f"output and reference both have no words {NOTHING}"),
        ("", "cat", 1.0, f"output has no words {NOTHING} (the reference has 1)"),
        ("«»", "cat sat", 1.0, f"output has no words {NOTHING} (the reference has 2)"),
        ("cat", "", 1.0, f"reference has no words {NOTHING} (the output has 1)"),
        ("the cat", "A", 1.0, f"reference has no words {NOTHING} (the output has 1)"),
    ],
)
def test_empty_sides(
    metric: Callable[[str, str], Score], output: str, expected: str, value: float, reason: str
) -> None:
    score = metric(output, expected)
    assert score.value == value
    assert score.reason.startswith(reason)


@pytest.mark.parametrize(
    ("output", "expected", "blank"),
    [
        ("", "", "the output and reference have"),
        (" \n", "cat", "the output has"),
        ("cat", "", "the reference has"),
    ],
)
def test_chrf_scores_an_empty_side_as_sacrebleu_does(
    output: str, expected: str, blank: str
) -> None:
    assert sacrebleu.sentence_chrf(output, [expected]).score == 0.0
    score = chrf(output, expected)
    assert score.value == 1.0
    assert score.reason.endswith(f"{blank} no characters besides whitespace, which chrF scores 0")


def test_only_punctuation_and_only_articles() -> None:
    assert chrf("...", "...").value == 5.0  # chrF reads characters, punctuation included
    assert exact_match("...", "the").value == 5.0
    assert token_f1("...", "the").value == 5.0


def test_texts_over_the_limit_are_cut_for_the_costly_metrics_only() -> None:
    long_output = "cat " * (MAX_TEXT_CHARS // 4) + "dog"
    long_reference = "cat " * (MAX_TEXT_CHARS // 4) + "emu"
    cut = f"only the first {MAX_TEXT_CHARS:,} characters of each text were compared"
    for metric in (rouge_l, chrf):
        score = metric(long_output, long_reference)
        assert score.value == 5.0 and score.reason.endswith(cut)
    assert exact_match(long_output, long_reference).value == 1.0
    assert token_f1(long_output, long_reference).value < 5.0


# ---- totality ---------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", METRICS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(output=TEXTS, expected=TEXTS)
def test_every_metric_scores_any_text(
    metric: Callable[[str, str], Score], output: str, expected: str
) -> None:
    assert_usable(metric(output, expected))


@pytest.mark.parametrize("metric", METRICS)
def test_every_metric_scores_odd_text(metric: Callable[[str, str], Score]) -> None:
    for output, expected in [
        ("\ud800", "\ud800"),
        ("\udfff cat", "cat \ud800"),
        ("\x00", "\x00\x00"),
        ("\U0001f600" * 50, "\U0001f600" * 49),
        ("İ", "i̇"),
        ("\u0391\u03a3 \u0391\u03a3.\u0391", "\u03b1\u03c2 \u03b1\u03c3.\u03b1"),  # final sigma
    ]:
        assert_usable(metric(output, expected))
