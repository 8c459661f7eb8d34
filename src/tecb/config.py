"""Config overlays: a user's config merged over the paper's (config/config.yaml).

Precedence, lowest first: the paper's choices (the workflow's ``config/config.yaml``) < ``config/config.yaml`` of the
working directory, when that is another file (``snakemake --directory .test``, a deployed workflow) < each
``--configfile`` in the order given < ``--config key=value``. Merge rule, applied layer by layer:

- mappings merge key by key, recursively (``embed: {device: cpu}`` changes only the device);
- any other value (a list, a scalar) replaces the one below;
- the sections in :data:`REPLACED` (``datasets``, ``models``, ``configurations``) replace the paper's
  wholesale when a layer gives them, so a config naming two models runs two models, not the paper's
  twelve plus two;
- ``pretrain`` follows ``models``: a layer that replaces ``models`` and says nothing about ``pretrain``
  turns the inherited pre-training off (the paper's pre-training names the paper's GBERT keys).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

REPLACED = ("datasets", "models", "configurations")


def merge(base: Mapping, overlay: Mapping, replaced: Iterable[str] = ()) -> dict:
    """``overlay`` over ``base`` (neither modified): mappings merge recursively, other values replace.

    Top-level keys in ``replaced`` are taken from ``overlay`` as they are, when present.
    """
    out = copy.deepcopy(dict(base))
    replaced = set(replaced)
    for key, value in overlay.items():
        value = plain(value)
        if key not in replaced and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def overlay_config(defaults: Mapping, *layers: Mapping) -> dict:
    """The defaults with each layer merged over them in turn (see the module docstring)."""
    config = plain(defaults)
    for layer in layers:
        layer = plain(layer)
        if "models" in layer and "pretrain" not in layer:
            layer = {**layer, "pretrain": {"enabled": False}}
        config = merge(config, layer, REPLACED)
    return config


class ConfigError(ValueError):
    """The config is invalid; the message lists every problem, each naming its key."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (plain YAML keeps the last one silently)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # the base class reports unhashable keys
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} given twice in one mapping (first at line {seen[key] + 1}); the second would "
                    "silently replace the first: keep one",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_yaml(path) -> dict:
    """A YAML config file; a syntax error (or a key given twice) is a :class:`ConfigError` with the file, line
    and column."""
    path = Path(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        mark, context_mark = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown position"
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        if context and context_mark is not None and context_mark.line != getattr(mark, "line", None):
            problem += f" ({context} that starts at line {context_mark.line + 1}, column {context_mark.column + 1})"
        elif context:
            problem += f" ({context})"
        raise ConfigError(f"{path}: YAML syntax error at {where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file holds a mapping of keys, not {type(data).__name__}")
    return data


def configfile_arguments(argv) -> list[str]:
    """The files a Snakemake command line ``argv`` (without the program) gives ``--configfile``/``--configfiles``."""
    files, taking = [], False
    for arg in argv:
        option, _, value = arg.partition("=")
        if option in ("--configfile", "--configfiles"):
            taking = not value
            files += [value] if value else []
        elif arg.startswith("-"):
            taking = False
        elif taking:
            files.append(arg)
    return files


def yaml_problems(paths) -> list[str]:
    """Why each of the YAML config files ``paths`` does not load (:func:`load_yaml`'s message: the file, the line and
    column, or that it is not a mapping); a file that cannot be opened is left to whoever opens it."""
    problems = []
    for path in paths:
        try:
            load_yaml(path)
        except ConfigError as error:
            problems.append(str(error))
        except OSError:
            continue
    return problems


def layered_config(workflow_dir, work_dir, configfiles=(), cli: Mapping | None = None) -> dict:
    """The run's config: every layer of the module docstring, in order, merged over the defaults."""
    defaults = Path(workflow_dir) / "config" / "config.yaml"
    layers = []
    local = Path(work_dir) / "config" / "config.yaml"
    if local.is_file() and os.path.realpath(local) != os.path.realpath(defaults):
        layers.append(load_yaml(local))
    layers += [load_yaml(p) for p in configfiles]
    if cli:
        layers.append(cli)
    return overlay_config(load_yaml(defaults), *layers)


def plain(value):
    """Mappings (snakemake's immutable ones included) as dicts and sequences as lists, recursively."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
