"""People's agreement with each other (E12), standard library only: Krippendorff's alpha
(nominal) and the percent agreement of the votes that several people cast on the same pair.

A unit is one pair (pooled over a metrics set: one pair of one result); its values are the
votes on it, one per person, each -1, 0 or +1. Only units with at least two values can show
agreement or disagreement (`pairs_multi`); the others are left out of both figures.

- alpha = 1 - D_o / D_e from the coincidence matrix o[c][k] = sum over units of the ordered
  pairs (c, k) of values by different people, each unit's weighted 1 / (m_u - 1): with
  n_c = sum_k o[c][k] and n = sum_c n_c, D_o = sum_{c != k} o[c][k] / n and
  D_e = sum_{c != k} n_c n_k / (n (n - 1)). 1 is perfect agreement, 0 is what chance gives,
  below 0 is systematic disagreement. None with fewer than two such units, or when every vote
  is the same value (D_e = 0: nothing to tell chance from).
- percent_agreement: the share of ordered pairs of votes within a unit that agree, pooled over
  the units (sum_u sum_c m_uc (m_uc - 1) / sum_u m_u (m_u - 1)); None without such units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class PeopleAgreement:
    reviewers: int  # distinct people who voted
    pairs_multi: int  # units with votes from at least two of them
    alpha: float | None
    percent_agreement: float | None


def krippendorff_nominal(units: Iterable[Sequence[int]]) -> tuple[int, float | None, float | None]:
    """(units with >= 2 values, alpha, percent agreement) of the units' values (any hashable
    values; -1, 0, +1 here). Exact arithmetic, one float at the end.

    The coincidence matrix need not be built: a value's marginal n_c is how many times it
    occurs in the units that count (each of its m_u - 1 pairings weighs 1 / (m_u - 1)), and the
    disagreeing coincidences of a unit sum to (m_u^2 - sum_c m_uc^2) / (m_u - 1). Those are
    summed as integers per m_u, so 100,000 votes cost no fraction arithmetic."""
    pairs_multi = 0
    marginal: Counter[int] = Counter()
    disagreeing: Counter[int] = Counter()  # by m_u - 1: sum of m_u^2 - sum_c m_uc^2
    agreeing = 0
    ordered = 0
    for values in units:
        m = len(values)
        if m < 2:
            continue
        pairs_multi += 1
        counts = Counter(values)
        marginal.update(counts)
        same = sum(mc * mc for mc in counts.values())
        disagreeing[m - 1] += m * m - same
        agreeing += same - m  # sum_c m_uc (m_uc - 1)
        ordered += m * (m - 1)
    if pairs_multi == 0:
        return 0, None, None
    percent = agreeing / ordered
    if pairs_multi < 2:
        return pairs_multi, None, percent
    n = sum(marginal.values())
    observed = sum((Fraction(o, d) for d, o in disagreeing.items()), Fraction(0))
    expected = n * n - sum(nc * nc for nc in marginal.values())  # sum_{c != k} n_c n_k
    if expected == 0:
        return pairs_multi, None, percent
    alpha = 1 - (n - 1) * observed / expected
    return pairs_multi, float(alpha), percent


def people_agreement(units: Iterable[Sequence[int]], reviewers: int) -> PeopleAgreement:
    """The figures of the units' votes (one value per person on each), by `reviewers` people."""
    pairs_multi, alpha, percent = krippendorff_nominal(units)
    return PeopleAgreement(reviewers, pairs_multi, alpha, percent)
