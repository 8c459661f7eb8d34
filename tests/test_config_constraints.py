"""Input mistakes named by key before any job (issue 46, item 4): constraints between keys that the schema cannot
say (a split recipe's smallest above its largest, the same configuration or seed twice, a folder key naming a
file), and a sweep over every numeric range of the schema, generated from the schema itself: a value just outside
each bound is refused naming its dotted key. Library calls: the Snakefile runs the same validation at startup
(also for `-n`), so no job starts."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from tecb import configcheck
from tecb.config import layered_config
from tecb.configcheck import ConfigError

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
DATASET = {"source": "million_posts", "text": "s2s"}


def _message(tmp_path, overlay: dict) -> str:
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(overlay))
    with pytest.raises(ConfigError) as err:
        configcheck.validated_config(layered_config(ROOT, tmp_path, [path]), SCHEMA)
    return str(err.value)


PAPER_CONFIGURATIONS = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["configurations"]


@pytest.mark.parametrize(
    ("overlay", "named"),
    [
        ({"datasets": {"D": {**DATASET, "min_fraction": 0.8, "max_fraction": 0.5}}}, "datasets.D.min_fraction: 0.8 "),
        ({"datasets": {"D": {**DATASET, "max_fraction": 0.05}}}, "datasets.D.min_fraction: 0.1 is larger than max_"),
        (
            {"datasets": {"R": {"source": "reddit", "text": "s2s", "min_subreddits": 20, "max_subreddits": 12}}},
            "datasets.R.min_subreddits: 20 is larger than max_subreddits 12",
        ),
        ({"configurations": PAPER_CONFIGURATIONS + PAPER_CONFIGURATIONS[:1]}, "configurations[14]: the same"),
        ({"pretrain": {"seeds": [42, 1, 42]}}, "pretrain.seeds: 42 listed twice"),
        ({"adapt": {"seeds": [3, 3]}}, "adapt.seeds: 3 listed twice"),
    ],
    ids=["min>max", "max<default-min", "subreddits", "configuration-twice", "pretrain-seed-twice", "adapt-seed-twice"],
)
def test_a_constraint_between_keys_is_named_by_key(tmp_path, overlay, named):
    assert named in _message(tmp_path, overlay)


@pytest.mark.parametrize("key", ["embed.cache_dir", "cluster.numba_cache"])
def test_a_folder_key_naming_a_file_is_named(tmp_path, monkeypatch, key):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "not-a-folder").write_text("x")
    section, name = key.split(".")
    message = _message(tmp_path, {section: {name: "not-a-folder"}})
    assert f"{key}: names an existing file, not a folder" in message
    assert "not-a-folder" not in message  # a string value is never shown
    # a folder (or one tecb will create) passes
    (tmp_path / "store").mkdir()
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump({section: {name: "store"}}))
    configcheck.validated_config(layered_config(ROOT, tmp_path, [path]), SCHEMA)


def test_the_paper_config_and_the_demo_pass_the_constraints():
    for name in ("config.yaml", "demo.yaml", "modern.yaml"):
        config = yaml.safe_load((ROOT / "config" / name).read_text())
        assert configcheck.cross_key_errors(config) == [], name


# --- every numeric range of the schema -------------------------------------------------------------------------

BOUNDS = {"minimum": -1, "exclusiveMinimum": 0, "maximum": 1, "exclusiveMaximum": 0}


def _resolve(node: dict, schema: dict) -> dict:
    while "$ref" in node:
        target = schema
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _ranges(node: dict, schema: dict, path: tuple = ()):
    """``(path, bound, limit, integer)`` of every numeric bound in the schema: ``path`` is a tuple of mapping keys,
    ``"*"`` for an entry of a free mapping (datasets, models, ...) and ``0`` for a list's first item."""
    node = _resolve(node, schema)
    types = node.get("type", [])
    types = [types] if isinstance(types, str) else types
    if {"integer", "number"} & set(types):
        for bound in BOUNDS:
            if bound in node:
                yield path, bound, node[bound], "number" not in types
    for key, child in (node.get("properties") or {}).items():
        yield from _ranges(child, schema, (*path, key))
    if isinstance(node.get("additionalProperties"), dict):
        yield from _ranges(node["additionalProperties"], schema, (*path, "*"))
    if isinstance(node.get("items"), dict):
        yield from _ranges(node["items"], schema, (*path, 0))
    for combined in ("oneOf", "anyOf", "allOf"):
        for child in node.get(combined) or []:
            yield from _ranges(child, schema, path)


def _outside(bound: str, limit, integer: bool):
    step = 1 if integer else 0.5
    return {"minimum": limit - step, "exclusiveMinimum": limit, "maximum": limit + step, "exclusiveMaximum": limit}[
        bound
    ]


def _overlay(path: tuple, value) -> dict:
    """A config overlay putting ``value`` at ``path`` (an entry ``X`` of a free mapping, a one-item list)."""
    for part in reversed(path):
        value = [value] if part == 0 else {("X" if part == "*" else part): value}
    return value


RANGES = sorted(
    {(p, b, lim, i) for p, b, lim, i in _ranges(configcheck.load_schema(SCHEMA), configcheck.load_schema(SCHEMA))},
    key=str,
)


def test_the_sweep_covers_the_schemas_ranges():
    paths = {".".join(map(str, p)) for p, *_ in RANGES}
    for expected in ("datasets.*.min_fraction", "embed.threads", "tables.chance.n_draws", "models.*.dim"):
        assert expected in paths, sorted(paths)
    assert len(RANGES) >= 60, len(RANGES)


@pytest.mark.parametrize(
    ("path", "bound", "limit", "integer"), RANGES, ids=[f"{'.'.join(map(str, r[0]))}:{r[1]}" for r in RANGES]
)
def test_a_value_outside_a_schema_range_is_named_by_its_key(tmp_path, path, bound, limit, integer):
    value = _outside(bound, limit, integer)
    message = _message(tmp_path, _overlay(path, value))
    dotted = ".".join("X" if p == "*" else str(p) for p in path if p != 0)
    assert dotted in message, (dotted, value, message)
