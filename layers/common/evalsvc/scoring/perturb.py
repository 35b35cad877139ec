"""Deterministic perturbations of a text, for synthetic data without an LLM: casing, whitespace,
typos and clause reordering. The same text, kind and seed always give the same variant."""

from __future__ import annotations

import hashlib
import random
import re

KINDS = ("casing", "whitespace", "typos", "reorder")


def _rng(text: str, seed: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))  # noqa: S311 - reproducible, not secret


def casing(text: str, rng: random.Random) -> str:
    choices = [text.lower(), text.upper(), text.swapcase(), text.title()]
    different = [c for c in choices if c != text]
    return rng.choice(different) if different else text


def whitespace(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    if len(words) > 1:
        for _ in range(max(1, len(words) // 4)):
            i = rng.randrange(len(words) - 1)
            words[i] = words[i] + " "
    padded = " ".join(words)
    return rng.choice(["  ", "\n", " \t"]) + padded + rng.choice(["  ", "\n", " "])


def typos(text: str, rng: random.Random) -> str:
    tokens = re.split(r"(\W+)", text)
    candidates = [i for i, t in enumerate(tokens) if t.isalpha() and len(t) >= 4]
    if not candidates:
        return text + text[-1:] if text else text
    for i in rng.sample(candidates, k=max(1, len(candidates) // 8)):
        word = tokens[i]
        j = rng.randrange(1, len(word) - 1)
        edit = rng.choice(["swap", "drop", "double"])
        if edit == "swap":
            word = word[: j - 1] + word[j] + word[j - 1] + word[j + 1 :]
        elif edit == "drop":
            word = word[:j] + word[j + 1 :]
        else:
            word = word[:j] + word[j] + word[j:]
        tokens[i] = word
    return "".join(tokens)


def reorder(text: str, rng: random.Random) -> str:
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    if len(sentences) > 1:
        rotated = sentences[1:] + sentences[:1]
        return " ".join(rotated)
    clauses = [c.strip() for c in re.split(r"[,;]", text) if c.strip()]
    if len(clauses) > 1:
        rng.shuffle(clauses)
        if ", ".join(clauses) != text:
            return ", ".join(clauses)
        return ", ".join(clauses[::-1])
    return typos(text, rng)


_PERTURB = {"casing": casing, "whitespace": whitespace, "typos": typos, "reorder": reorder}


def perturb(text: str, kind: str, seed: str) -> str:
    """`text` perturbed by `kind`; never identical to `text` unless it is empty."""
    variant = _PERTURB[kind](text, _rng(text, f"{kind}:{seed}"))
    if variant == text and text:
        variant = whitespace(text, _rng(text, f"whitespace:{seed}"))
    return variant
