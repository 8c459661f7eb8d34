"""The models table (issue 37.3; not to be confused with Table 1, the datasets): each configured model with mteb's registry metadata and, per evaluated dataset,
whether it was trained on that dataset's data (``yes`` / ``no`` / ``unknown``, from mteb's ``training_datasets``).

A ``kind: mteb`` model reads its registry entry by name; a ``kind: huggingface`` model whose ``id`` is a registry
name gets that entry's metadata too (its revision is the config's). Other models have no registry metadata
(empty cells, ``unknown`` flags). Only called for configs with such models: it imports mteb.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

CAPTION = (
    "The models: mteb's registry metadata of each model and whether it was trained on each dataset's data "
    "(yes / no / unknown, from mteb's training_datasets)."
)
FIELDS = ["n_parameters", "embed_dim", "max_tokens", "license", "open_weights", "use_instructions", "revision"]


def registry_name(spec: Mapping) -> str | None:
    """The mteb registry name a model entry stands for, or None."""
    from tecb.embed.mteb_model import registry_names

    if spec.get("kind") == "mteb":
        return spec["name"]
    if spec.get("kind", "huggingface") == "huggingface" and spec.get("id") in registry_names():
        return spec["id"]
    return None


def models_table(models: Mapping[str, Mapping], datasets) -> pd.DataFrame:
    """One row per model (config order): key, display name, kind, mteb name, :data:`FIELDS`, ``trained_on:<dataset>``
    per dataset and ``notes`` (overrides of mteb's settings)."""
    from tecb.embed.mteb_model import model_card

    rows = []
    for key, spec in models.items():
        name = registry_name(spec)
        row = {"model": key, "name": spec.get("name", key), "kind": spec.get("kind", "huggingface"), "mteb_name": name}
        if name is None:
            row.update({f: None for f in FIELDS} | {f"trained_on:{d}": "unknown" for d in datasets})
            row["notes"] = "not in mteb's registry"
        else:
            as_mteb = dict(spec) if spec.get("kind") == "mteb" else {"name": name, "revision": spec.get("revision")}
            card = model_card(as_mteb, datasets)
            row.update({f: card[f] for f in FIELDS} | {f"trained_on:{d}": card[f"trained_on:{d}"] for d in datasets})
            row["notes"] = card["notes"] if spec.get("kind") == "mteb" else "kind huggingface: mteb's metadata by id"
        rows.append(row)
    return pd.DataFrame(rows)


def trained_marks(table: pd.DataFrame) -> dict[tuple[str, str], str]:
    """``{(model key, dataset): "yes"}`` for the cells of Table 2 whose model was trained on that dataset's data."""
    out = {}
    for _, row in table.iterrows():
        for column, value in row.items():
            if str(column).startswith("trained_on:") and value == "yes":
                out[(row["model"], column.split(":", 1)[1])] = "yes"
    return out


def to_markdown(table: pd.DataFrame) -> str:
    """The models table as Markdown; the trained-on flags as one column ``trained on`` listing the datasets."""
    flags = [c for c in table.columns if c.startswith("trained_on:")]
    head = [
        "model",
        "mteb name",
        "parameters",
        "dim",
        "max tokens",
        "licence",
        "open weights",
        "trained on (yes)",
        "unknown for",
        "notes",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        yes = [c.split(":", 1)[1] for c in flags if r[c] == "yes"]
        unknown = [c.split(":", 1)[1] for c in flags if r[c] == "unknown"]
        cells = [
            r["name"],
            r["mteb_name"] or "",
            _n(r["n_parameters"]),
            _n(r["embed_dim"]),
            _n(r["max_tokens"]),
            r["license"] or "",
            "" if r["open_weights"] is None else str(r["open_weights"]).lower(),
            ", ".join(yes) or "none",
            ", ".join(unknown),
            r["notes"] or "",
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _n(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return f"{int(value):,}"
