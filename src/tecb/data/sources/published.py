"""The paper's published splits on the Hugging Face hub (design §6): ``test.jsonl`` -> a dataset.

Each line of ``test.jsonl`` is one split, ``{"sentences": [...], "labels": [...]}``. Loading them
gives exactly the splits the paper scored; texts are deduplicated across splits by :func:`tecb.data.datasets.assemble`.
"""

from __future__ import annotations

from pathlib import Path

# The four datasets of the paper at the revisions it used (design §6).
PUBLISHED = {
    "published_blurbs_s2s": ("slvnwhrl/blurbs-clustering-s2s", "22793b6a6465bf00120ad525e38c51210858132c"),
    "published_blurbs_p2p": ("slvnwhrl/blurbs-clustering-p2p", "a2dd5b02a77de3466a3eaa98ae586b5610314496"),
    "published_tenkgnad_s2s": ("slvnwhrl/tenkgnad-clustering-s2s", "6cddbe003f12b9b140aec477b583ac4191f01786"),
    "published_tenkgnad_p2p": ("slvnwhrl/tenkgnad-clustering-p2p", "5c59e41555244b7e45c9a6be2d720ab4bafae558"),
}
FILENAME = "test.jsonl"

#: The paper's Table 1 (``reference/paper_table1.csv``) for the published datasets, by the source of each: the
#: exact counts a local ``test.jsonl`` must have to count as the paper's splits (the hub file's SHA-256 cannot be
#: checked offline). ``avg_chars`` is left out: it is rounded and the paper does not say over what it averages.
PAPER_TABLE1 = {
    "published_blurbs_s2s": {
        "unique_samples": 17726,
        "splits": 28,
        "split_size_min": 177,
        "split_size_max": 16425,
        "classes_min": 4,
        "classes_max": 93,
    },
    "published_blurbs_p2p": {
        "unique_samples": 18084,
        "splits": 28,
        "split_size_min": 177,
        "split_size_max": 16425,
        "classes_min": 4,
        "classes_max": 93,
    },
    "published_tenkgnad_s2s": {
        "unique_samples": 10267,
        "splits": 10,
        "split_size_min": 1436,
        "split_size_max": 9962,
        "classes_min": 9,
        "classes_max": 9,
    },
    "published_tenkgnad_p2p": {
        "unique_samples": 10275,
        "splits": 10,
        "split_size_min": 1436,
        "split_size_max": 9962,
        "classes_min": 9,
        "classes_max": 9,
    },
}


def statistics(texts: list[str], splits) -> dict:
    """The Table 1 counts of a dataset (its unique ``texts`` and ``splits`` of (text_ids, labels))."""
    sizes = [len(ids) for ids, _ in splits]
    classes = [len(set(labels)) for _, labels in splits]
    return {
        "unique_samples": len(texts),
        "splits": len(splits),
        "split_size_min": min(sizes, default=0),
        "split_size_max": max(sizes, default=0),
        "classes_min": min(classes, default=0),
        "classes_max": max(classes, default=0),
    }


def table1_differences(source_name: str, stats: dict) -> str:
    """How ``stats`` differ from the paper's Table 1 for the published source ``source_name`` ("" = equal)."""
    paper = PAPER_TABLE1.get(source_name)
    if paper is None:
        return f"the paper has no published dataset {source_name!r} to check it against"
    diffs = [f"{key} {stats.get(key)} (paper {value})" for key, value in paper.items() if stats.get(key) != value]
    return ", ".join(diffs)


class PublishedFormatError(ValueError):
    """A line of a published ``test.jsonl`` breaks the format; the message names file, line and field."""


def read_splits(path: str | Path) -> list[tuple[list[str], list[str]]]:
    """Read ``test.jsonl``: one ``(sentences, labels)`` pair per non-empty line."""
    from tecb.data.sources.custom import CustomFormatError, _numeric_collisions, _value
    from tecb.data.sources.files import json_lines, read_text

    splits = []
    all_labels, where_labels = [], []
    for line_no, obj in json_lines(path, read_text(path), PublishedFormatError):
        where = f"{path}, line {line_no}"
        for name in ("sentences", "labels"):
            value = obj.get(name)
            if not isinstance(value, list):
                raise PublishedFormatError(f"{where}: field {name!r} is missing or not a list")
            bad = next(
                (i for i, v in enumerate(value) if not isinstance(v, (str, int, float)) or isinstance(v, bool)), None
            )
            if bad is not None:
                raise PublishedFormatError(f"{where}: field {name!r}[{bad}] is not a string")
        if len(obj["sentences"]) != len(obj["labels"]):
            raise PublishedFormatError(
                f"{where}: field 'labels' has {len(obj['labels'])} entries, 'sentences' {len(obj['sentences'])}"
            )
        try:
            sentences = [_value(v, where, f"sentences[{i}]", False) for i, v in enumerate(obj["sentences"])]
            labels = [_value(v, where, f"labels[{i}]", True) for i, v in enumerate(obj["labels"])]
        except CustomFormatError as err:
            raise PublishedFormatError(str(err)) from None
        for i, v in enumerate(labels):
            if not v:
                raise PublishedFormatError(f"{where}: field 'labels'[{i}] is empty")
            all_labels.append(v)
            where_labels.append(f"line {line_no}, labels[{i}]")
        splits.append((sentences, labels))
    if not splits:
        raise PublishedFormatError(f"{path}: no splits")
    try:
        _numeric_collisions(all_labels, where_labels, path, "labels")
    except CustomFormatError as err:
        raise PublishedFormatError(str(err)) from None
    return splits


def hub_download(repo_id: str, revision: str, dest: str | Path, filename: str = FILENAME, log=print) -> Path:
    """Fetch ``filename`` of the hub dataset ``repo_id`` at ``revision`` and copy it atomically to ``dest``."""
    import shutil

    from huggingface_hub import hf_hub_download

    from tecb.io import atomic_path

    cached = hf_hub_download(repo_id, filename, repo_type="dataset", revision=revision)
    with atomic_path(dest) as tmp:
        shutil.copyfile(cached, tmp)
    log(f"{repo_id}@{revision}/{filename} -> {dest}")
    return Path(dest)


def resolve(source_name: str, spec: dict) -> tuple[str, str]:
    """``(repo_id, revision)`` of a published source: the config's, else the paper's pinned ones."""
    default = PUBLISHED.get(source_name, (None, None))
    repo_id = spec.get("repo_id") or default[0]
    revision = spec.get("revision") or default[1]
    if not repo_id:
        raise ValueError(f"config: sources.{source_name} needs a `repo_id` (or a local `path` to test.jsonl)")
    if not revision:
        raise ValueError(f"config: sources.{source_name} needs a pinned `revision` for {repo_id}")
    return repo_id, revision
