"""Reference metrics: an output scored against the answer it should have given, with no model.

Four pure functions, each `(output, reference) -> Score` on the 1..5 scale of the checks:

- `exact_match`: 5 when the two texts are the same after `norm`, else 1.
- `token_f1`: 1 + 4 F1 of the normalised words (the multiset of words both texts share).
- `rouge_l`: 1 + 4 F of the longest common subsequence of the normalised words.
- `chrf`: 1 + 4 chrF/100, sacrebleu's sentence chrF with its defaults (character n-grams up to
  6, no word n-grams, beta 2).

`norm` is the usual normalisation of reading-comprehension answers: lower case, every
punctuation character (Unicode category P*) dropped, the words "a", "an" and "the" dropped,
whitespace collapsed. Every function is total: for any str (lone surrogates, NULs, any length)
it returns a score in [1, 5] with a non-empty reason that can be stored, and never raises.

Time and memory are linear in the texts, except ROUGE-L's subsequence, which is bit-parallel:
one big-integer step per word of the longer text, each step as wide as the shorter text in
bits, and masks of at most m * m / 16 bits for m words (FREQUENT says why). So that no text
makes ROUGE-L or chrF slow, they read at most the first MAX_TEXT_CHARS characters of each text
(the limit of a dataset's fields, so only a text from elsewhere is ever cut) and say so in the
reason. bench/checks.py measures the worst cases.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter
from collections.abc import Callable, Hashable, Sequence

from evalsvc.core.observability import logger
from evalsvc.models.datasets import MAX_TEXT_CHARS
from evalsvc.scoring.checks import FAIL, PASS, Score, graded
from evalsvc.scoring.text import storable

ARTICLES = frozenset({"a", "an", "the"})
PREVIEW_CHARS = 40
NORMALISED = "after normalising case, punctuation and articles"
Metric = Callable[[str, str], Score]


# ---- normalisation ------------------------------------------------------------------------------


class _Punctuation(dict[int, int | None]):
    """str.translate's table that deletes punctuation (Unicode category P*): each code point's
    entry made the first time a text holds it (None: deleted; itself: kept), so no table of
    every code point is built up front."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)).startswith("P") else code
        self[code] = kept
        return kept


_PUNCTUATION = _Punctuation()


# The words of the last texts: the three word metrics of one pair read the same two texts.
@functools.lru_cache(maxsize=4)
def _words(text: str) -> tuple[str, ...]:
    kept = text.lower().translate(_PUNCTUATION)
    return tuple(word for word in kept.split() if word not in ARTICLES)


def norm(text: str) -> str:
    """`text` lower-cased, without punctuation (any Unicode category P*), without the words
    "a", "an" and "the", its words joined by single spaces."""
    return " ".join(_words(text))


def tokens(text: str) -> list[str]:
    """The words of `norm(text)`."""
    return list(_words(text))


# ---- what every metric shares -------------------------------------------------------------------


def _shown(word: str) -> str:
    """`word` quoted for a reason: at most PREVIEW_CHARS characters, quotes included, and
    escaped (a control character or a lone surrogate shows as its escape)."""
    quoted = repr(word)
    if len(quoted) <= PREVIEW_CHARS:
        return quoted
    return quoted[: PREVIEW_CHARS - 4] + "..." + quoted[0]


def _total(name: str) -> Callable[[Metric], Metric]:
    """The metric made total: a score in [1, 5] and a non-empty, storable reason whatever the
    texts. A metric that raises (out of memory, or chrF without sacrebleu installed) scores 1
    and says so; the error is logged without the texts."""

    def wrap(metric: Metric) -> Metric:
        @functools.wraps(metric)
        def score(output: str, reference: str) -> Score:
            try:
                result = metric(output, reference)
            except Exception as exc:
                logger.warning(
                    "reference metric raised",
                    extra={"metric": name, "error": exc.__class__.__name__},
                )
                return Score(
                    FAIL,
                    f"{name} could not be computed for this output "
                    f"({exc.__class__.__name__}); it is scored as failing",
                )
            value = result.value if math.isfinite(result.value) else FAIL
            reason = storable(result.reason).strip() or f"{name} gave no reason"
            return Score(min(PASS, max(FAIL, value)), reason)

        return score

    return wrap


def _words_count(n: int) -> str:
    return f"{n} word" if n == 1 else f"{n} words"


def _bounded(output: str, reference: str) -> tuple[str, str, str]:
    """The texts cut to MAX_TEXT_CHARS characters, and what to add to the reason if either was."""
    if len(output) <= MAX_TEXT_CHARS and len(reference) <= MAX_TEXT_CHARS:
        return output, reference, ""
    note = f"; only the first {MAX_TEXT_CHARS:,} characters of each text were compared"
    return output[:MAX_TEXT_CHARS], reference[:MAX_TEXT_CHARS], note


def _f_measure(common: int, output_count: int, reference_count: int) -> tuple[float, float, float]:
    """(F1, precision, recall) of `common` items out of `output_count` and `reference_count`;
    both sides empty: 1 (nothing to find, nothing found); one side empty: 0."""
    if output_count == 0 and reference_count == 0:
        return 1.0, 1.0, 1.0
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / output_count, common / reference_count
    return 2 * precision * recall / (precision + recall), precision, recall


def _empty_side(what: str, output_count: int, reference_count: int) -> str | None:
    """The reason when a side has no words after normalising, None when both have some."""
    if output_count and reference_count:
        return None
    if not output_count and not reference_count:
        return f"output and reference both have no words {NORMALISED}: {what} 1 by convention"
    if not output_count:
        return f"output has no words {NORMALISED} (the reference has {reference_count}): {what} 0"
    return f"reference has no words {NORMALISED} (the output has {output_count}): {what} 0"


# ---- exact match --------------------------------------------------------------------------------


def _first_difference(output: Sequence[str], reference: Sequence[str]) -> str:
    for index, (got, wanted) in enumerate(zip(output, reference, strict=False)):
        if got != wanted:
            return f"first difference at word {index + 1}: {_shown(got)} vs {_shown(wanted)}"
    n = min(len(output), len(reference)) + 1
    if len(output) < len(reference):
        if not output:
            return (
                f"the output has no words {NORMALISED}; the reference starts {_shown(reference[0])}"
            )
        going_on = _shown(reference[n - 1])
        return f"the output ends before word {n}, where the reference goes on with {going_on}"
    if not reference:
        return f"the reference has no words {NORMALISED}; the output starts {_shown(output[0])}"
    return f"the output goes on at word {n} with {_shown(output[n - 1])}, after the reference ends"


@_total("exact_match")
def exact_match(output: str, reference: str) -> Score:
    """5 when `norm(output) == norm(reference)`, else 1, with the first word that differs."""
    got, wanted = _words(output), _words(reference)
    if got == wanted:
        return Score(PASS, f"output matches the reference ({NORMALISED})")
    return Score(FAIL, f"output differs from the reference: {_first_difference(got, wanted)}")


# ---- token F1 -----------------------------------------------------------------------------------


@_total("token_f1")
def token_f1(output: str, reference: str) -> Score:
    """1 + 4 F1 over the normalised words, shared words counted as a multiset."""
    got, wanted = _words(output), _words(reference)
    common = sum((Counter(got) & Counter(wanted)).values())
    f1, precision, recall = _f_measure(common, len(got), len(wanted))
    empty = _empty_side("token F1", len(got), len(wanted))
    if empty is not None:
        return Score(graded(f1), empty)
    return Score(
        graded(f1),
        f"token F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f}): "
        f"{_words_count(common)} shared, of {len(got)} in the output and {len(wanted)} in the "
        f"reference ({NORMALISED})",
    )


# ---- ROUGE-L ------------------------------------------------------------------------------------

# A word of the shorter text occurring at least FREQUENT times gets its bit mask built once and
# kept; a rarer one is kept as its positions, its mask rebuilt at each step where it is needed.
# Kept masks take at most (m / FREQUENT) * m bits for m words, where a mask kept for every
# distinct word would take up to m * m / 2 bits when the words all differ (about 160 MiB at
# 50,000 words). A rebuilt mask costs one shift per occurrence, or from FEW occurrences on (where
# that is slower) a pass over the positions and one conversion from bytes.
FREQUENT = 16
FEW = 8


def lcs_length(first: Sequence[Hashable], second: Sequence[Hashable]) -> int:
    """The length of a longest common subsequence, bit-parallel: with the m items of the
    shorter sequence as bit positions, one big-integer step per item of the longer one. Bit i
    of `v` is 0 where the subsequence found so far grew at item i, so the length is the
    number of 0 bits of `v` in its m bits."""
    short, long = (first, second) if len(first) <= len(second) else (second, first)
    m = len(short)
    if m == 0:
        return 0
    present = set(long)
    positions: dict[Hashable, list[int]] = {}
    for index, item in enumerate(short):
        if item in present:
            positions.setdefault(item, []).append(index)
    one = (1).__lshift__
    masks = {item: sum(map(one, at)) for item, at in positions.items() if len(at) >= FREQUENT}
    rare = {item: at for item, at in positions.items() if len(at) < FREQUENT}
    del positions
    scratch = bytearray((m + 7) // 8)
    width = (1 << m) - 1
    v = width
    for item in long:
        mask = masks.get(item)
        if mask is None:
            at = rare.get(item)
            if at is None:
                continue
            if len(at) == 1:
                mask = one(at[0])
            elif len(at) < FEW:
                mask = sum(map(one, at))
            else:
                for index in at:
                    scratch[index >> 3] |= 1 << (index & 7)
                mask = int.from_bytes(scratch, "little")
                for index in at:
                    scratch[index >> 3] = 0
        u = v & mask
        if u:
            v = ((v + u) | (v - u)) & width
    return m - v.bit_count()


@_total("rouge_l")
def rouge_l(output: str, reference: str) -> Score:
    """1 + 4 F of the longest common subsequence of the normalised words."""
    output, reference, note = _bounded(output, reference)
    got, wanted = _words(output), _words(reference)
    common = lcs_length(got, wanted)
    f, precision, recall = _f_measure(common, len(got), len(wanted))
    empty = _empty_side("ROUGE-L F", len(got), len(wanted))
    if empty is not None:
        return Score(graded(f), empty + note)
    return Score(
        graded(f),
        f"ROUGE-L F {f:.3f} (precision {precision:.3f}, recall {recall:.3f}): the longest "
        f"common subsequence has {_words_count(common)}, of {len(got)} in the output and "
        f"{len(wanted)} in the reference ({NORMALISED}){note}",
    )


# ---- chrF ---------------------------------------------------------------------------------------


def chrf_score(output: str, reference: str) -> float:
    """sacrebleu's sentence chrF (0..100) with its defaults; sacrebleu is imported here, on
    the first use, not with the module."""
    from sacrebleu.metrics.chrf import CHRF

    return float(CHRF().sentence_score(output, [reference]).score)


@_total("chrf")
def chrf(output: str, reference: str) -> Score:
    """1 + 4 chrF/100: sacrebleu's sentence chrF (character n-grams up to 6, beta 2; spaces
    are not counted)."""
    output, reference, note = _bounded(output, reference)
    value = chrf_score(output, reference)
    if not math.isfinite(value):
        return Score(FAIL, f"chrF gave no usable score ({value}); it is scored as failing{note}")
    shown = f"chrF {value:.1f} of 100 (sacrebleu sentence chrF: character 1- to 6-grams, beta 2)"
    blank = [
        side for side, text in (("output", output), ("reference", reference)) if not text.split()
    ]
    if blank:
        sides = " and ".join(blank)
        verb = "have" if len(blank) == 2 else "has"
        shown += f": the {sides} {verb} no characters besides whitespace, which chrF scores 0"
    return Score(graded(value / 100.0), shown + note)


# The reference checks by their name after `check:` (scoring.checks.REFERENCE_CHECKS).
BY_NAME: dict[str, Metric] = {
    "exact_match": exact_match,
    "token_f1": token_f1,
    "rouge_l": rouge_l,
    "chrf": chrf,
}
