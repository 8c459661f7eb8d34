"""The paper's split recipes (design §6).

A recipe works on *items* (books, articles, submissions) and returns, per split, the item indices in
the order they were drawn. Turning items into unique texts happens later (:func:`tecb.data.datasets.assemble`),
so the S2S and P2P variants of a source share exactly the same splits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, kw_only=True)
class FractionRecipe:
    """The random-fraction recipe (:func:`random_fraction_splits`): ``n_splits`` samples of ``min_fraction`` ..
    ``max_fraction`` of the items each (the config entry's keys of the same names)."""

    n_splits: int = 10
    min_fraction: float = 0.1
    max_fraction: float = 1.0


def random_fraction_splits(
    n_items: int, n_splits: int, rng: np.random.Generator, min_fraction: float = 0.1, max_fraction: float = 1.0
) -> list[np.ndarray]:
    """``n_splits`` random samples (without replacement) of ``min_fraction``..``max_fraction`` of ``n_items``
    items each."""
    if not 0 < min_fraction <= max_fraction <= 1:
        raise ValueError(
            f"fractions must satisfy 0 < min_fraction <= max_fraction <= 1, got {min_fraction}..{max_fraction}"
        )
    splits = []
    for _ in range(n_splits):
        size = max(2, int(round(rng.uniform(min_fraction, max_fraction) * n_items)))
        splits.append(rng.choice(n_items, size=min(size, n_items), replace=False))
    return splits


def group_draw_splits(
    groups: Sequence[str], n_splits: int, rng: np.random.Generator, min_groups: int = 10, max_groups: int = 50
) -> list[np.ndarray]:
    """Each split takes all items of ``min_groups``..``max_groups`` randomly drawn groups (Reddit: subreddits)."""
    if not 1 <= min_groups <= max_groups:
        raise ValueError(f"group counts must satisfy 1 <= min <= max, got {min_groups}..{max_groups}")
    groups = np.asarray(groups, dtype=object)
    names = np.array(sorted(set(groups.tolist())), dtype=object)
    if len(names) < 2:
        raise ValueError(f"need at least two groups to draw from, got {len(names)}")
    splits = []
    for _ in range(n_splits):
        k = int(rng.integers(min(min_groups, len(names)), min(max_groups, len(names)) + 1))
        chosen = set(rng.choice(names, size=k, replace=False).tolist())
        idx = np.flatnonzero([g in chosen for g in groups])
        splits.append(rng.permutation(idx))
    return splits


def within_group_splits(
    groups: Sequence[str], labels: Sequence[str], min_labels: int = 2
) -> list[tuple[str, np.ndarray]]:
    """One split per group (sorted by name) holding its items; groups with fewer than ``min_labels`` labels are skipped."""
    groups = np.asarray(groups, dtype=object)
    labels = np.asarray(labels, dtype=object)
    out = []
    for name in sorted(set(groups.tolist())):
        idx = np.flatnonzero(groups == name)
        if len(set(labels[idx].tolist())) >= min_labels:
            out.append((name, idx))
    return out
