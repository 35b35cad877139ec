"""Text for checks and model answers: UTF-8 that can always be encoded, and the measures of
the checks (words, sentences, syllables, Flesch reading ease; in-house: no downloads, no
dictionaries)."""

from __future__ import annotations

import codecs
import re

_REPLACEMENT = "evalsvc-replacement-character"


def _replace_lone_surrogates(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "\ufffd".encode() * (error.end - error.start), error.end


codecs.register_error(_REPLACEMENT, _replace_lone_surrogates)


def utf8(text: str) -> bytes:
    """`text` as UTF-8, a lone surrogate (not encodable) read as U+FFFD."""
    return text.encode("utf-8", _REPLACEMENT)


def storable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so it can be stored and sent."""
    return utf8(text).decode("utf-8")


_WORD = re.compile(r"[A-Za-z\u00C0-\u024F]+(?:['\u2019][A-Za-z]+)?|\d+(?:[.,]\d+)*")
_TOKEN = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]++(?=\s|$)|\n{2,}")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, for overlap measures (any script)."""
    return [t.lower() for t in _TOKEN.findall(text)]


def sentence_count(text: str) -> int:
    stripped = text.strip()
    if not stripped:
        return 0
    ends = len(_SENTENCE_END.findall(stripped))
    # Text that does not end with punctuation still ends a sentence.
    return max(1, ends + (0 if re.search(r"[.!?]\s*$", stripped) else 1))


def syllables(word: str) -> int:
    """English syllables by vowel groups, with the usual silent-e and -le corrections."""
    w = word.lower().strip("'\u2019")
    if not w.isalpha():
        return max(1, len(w) // 3)  # numbers read as a few syllables
    if len(w) <= 3:
        return 1
    count = len(_VOWEL_GROUPS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")):
        count -= 1
    if w.endswith(("es", "ed")) and not w.endswith(("ted", "ded", "ses", "zes", "ces", "ges")):
        count -= 1
    return max(1, count)


def flesch_reading_ease(text: str) -> float | None:
    """206.835 - 1.015 (words/sentences) - 84.6 (syllables/words); None without words."""
    found = words(text)
    if not found:
        return None
    sentences = sentence_count(text)
    syllable_total = sum(syllables(w) for w in found)
    return 206.835 - 1.015 * (len(found) / sentences) - 84.6 * (syllable_total / len(found))
