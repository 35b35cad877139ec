"""What `check:no_pii` looks for: email addresses, phone numbers and payment card numbers,
without taking dates, times, versions, IP addresses, prices, order or invoice numbers and ISBNs
for phone or card numbers.

A run of digits is a phone number only with evidence that it is one: a leading `+` and country
code, an area code in parentheses, a national grouping (North American 3-3-4; a trunk `0`
followed by groups, as in most of Europe), or a word such as "call" or "phone" just before it.
A bare run of digits with none of these (`Order 4155550132`) is not taken for a phone number.
A card number is 13-19 digits in the groupings cards are printed in, starting as card numbers
do (2-6), passing the Luhn check.

Every pattern here is linear: each candidate starts only where no digit or word character
precedes it, and its repetitions are bounded.
"""

from __future__ import annotations

import re

# ---- email addresses ---------------------------------------------------------------------------

_LOCAL_TAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}")  # read backwards from the "@"
_DOMAIN = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}")


def find_email(text: str) -> str | None:
    """The first email address in `text` (at most 64 characters before the @ are looked at)."""
    at = text.find("@")
    while at != -1:
        before = _LOCAL_TAIL.match(text[max(0, at - 64) : at][::-1])
        after = _DOMAIN.match(text, at + 1)
        if before and after and not before.group(0).endswith("."):
            return text[at - len(before.group(0)) : after.end()]
        at = text.find("@", at + 1)
    return None


# ---- phone and card numbers --------------------------------------------------------------------

# Digits in groups joined by one or two separators (space, no-break space, hyphen, dot,
# slash), an optional leading "+", groups optionally in parentheses. No digit, letter, "+",
# decimal point, hyphen or currency sign may come just before it.
_NUMBER = re.compile(
    r"(?<![\w+.,/#$\u20ac\u00a3\u00a5-])"
    r"(\+?\(?\d{1,19}\)?(?:[ \u00a0./-]{1,2}\(?\d{1,8}\)?){0,7})"
    r"(?![\w%\u20ac\u00a3\u00a5]|[.,]\d)"
)
_GROUP = re.compile(r"\d+")
_SEPARATOR = re.compile(r"[ \u00a0./-]+")
_AREA_CODE = re.compile(r"\(\d{1,5}\)")

# Words just before a number that say what it is (the 24 characters before it are read).
_PHONE_WORDS = re.compile(
    r"\b(?:phone|tel|telephone|call|calling|mobile|cell|fax|whatsapp|sms|text|ring|dial|"
    r"contact|reach|hotline|t\u00e9l|telefon|tel\u00e9fono|telefono|numero|n\u00famero)"
    r"(?:\W+\w{1,6}){0,2}\W{0,6}$",
    re.IGNORECASE,
)
_OTHER_NUMBER_WORDS = re.compile(
    r"(?:\b(?:order|invoice|inv|ref|reference|isbn|issn|id|account|acct|tracking|serial|sku|"
    r"ticket|case|version|ver|build|release|page|pp|item|part|model|batch|lot|zip|postcode|"
    r"price|total|amount|usd|eur|gbp|no|nr)(?:\W+(?:number|no|nr|num|id))?|[#\u2116$\u20ac"
    r"\u00a3\u00a5])\W{0,4}$",
    re.IGNORECASE,
)
_CURRENCY_AFTER = re.compile(r"\s?(?:\$|\u20ac|\u00a3|\u00a5|usd\b|eur\b|gbp\b|%)", re.IGNORECASE)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _isbn(groups: list[str]) -> bool:
    """An ISBN as printed: ISBN-13 (978/979) in 5 groups, or ISBN-10 in 4, checksum valid."""
    digits = "".join(groups)
    if len(groups) == 5 and len(digits) == 13 and digits[:3] in ("978", "979"):
        return sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits)) % 10 == 0
    if len(groups) == 4 and len(digits) == 10:
        return sum((10 - i) * int(d) for i, d in enumerate(digits)) % 11 == 0
    return False


def _date(groups: list[str], separators: list[str]) -> bool:
    """Year-month-day, day.month.year or month/day/year, alone or followed by a time."""
    if len(groups) < 3 or separators[0] != separators[1] or separators[0] not in "-./":
        return False
    if len(groups) > 3 and separators[2].strip():
        return False  # a fourth group joined like the first three: not a date and a time
    a, b, c = (int(g) for g in groups[:3])
    if len(groups[0]) == 4:
        return 1 <= b <= 12 and 1 <= c <= 31
    if len(groups[2]) in (2, 4):
        return (1 <= a <= 31 and 1 <= b <= 12) or (1 <= a <= 12 and 1 <= b <= 31)
    return False


def _ip_address(groups: list[str], separators: list[str]) -> bool:
    return (
        len(groups) == 4
        and all(s == "." for s in separators)
        and all(len(g) <= 3 and int(g) <= 255 for g in groups)
    )


def _national_grouping(groups: list[str], separators: list[str]) -> bool:
    """North American 3-3-4 (optionally after a 1), or a trunk 0 and 9-12 digits in groups,
    joined by one kind of separator."""
    if len(groups) < 2 or len(set(separators)) > 1:
        return False
    lengths = [len(g) for g in groups]
    if lengths == [3, 3, 4] or (lengths == [1, 3, 3, 4] and groups[0] == "1"):
        return True
    return groups[0].startswith("0") and 9 <= sum(lengths) <= 12


def _card_grouping(groups: list[str], separators: list[str]) -> bool:
    if len(set(separators)) > 1 or any(s not in (" ", "-") for s in separators):
        return False
    lengths = [len(g) for g in groups]
    return len(groups) == 1 or lengths in ([4, 4, 4, 4], [4, 4, 4, 4, 3], [4, 6, 5], [4, 6, 4])


def classify_number(candidate: str, before: str, after: str) -> str | None:
    """'phone', 'card' or None for a candidate number, given the text just before and after."""
    groups = _GROUP.findall(candidate)
    separators = [s.strip() or " " for s in _SEPARATOR.findall(candidate.replace("(", ""))]
    digits = "".join(groups)
    if _date(groups, separators) or _ip_address(groups, separators) or _isbn(groups):
        return None
    if _CURRENCY_AFTER.match(after):
        return None
    phone_word = _PHONE_WORDS.search(before) is not None
    if not phone_word and _OTHER_NUMBER_WORDS.search(before):
        return None
    if (
        13 <= len(digits) <= 19
        and digits[0] in "23456"
        and candidate[0].isdigit()
        and _card_grouping(groups, separators)
        and _luhn(digits)
    ):
        return "card"
    if not 7 <= len(digits) <= 15 or "/" in separators:
        return None
    if phone_word:
        return "phone"
    if candidate.startswith("+") and len(digits) >= 8:
        return "phone"
    if _AREA_CODE.search(candidate) and len(groups) >= 2:
        return "phone"
    if _national_grouping(groups, separators):
        return "phone"
    return None


def find_pii(text: str) -> str | None:
    """What kind of personal data `text` holds first found ('an email address', 'a phone
    number', 'a payment card number'), or None."""
    if find_email(text):
        return "an email address"
    for match in _NUMBER.finditer(text):
        candidate = match.group(1)
        start, end = match.span(1)
        kind = classify_number(candidate, text[max(0, start - 24) : start], text[end : end + 5])
        if kind == "card":
            return "a payment card number"
        if kind == "phone":
            return "a phone number"
    return None
