"""The key tables of ``config/README.md``, rendered from the config schema (the one place a default and a
description live).

The README marks each table with ``<!-- schema table: KEY ... -->`` (the top-level keys it lists) and
``<!-- end schema table -->``; everything between the marks is rendered here, one row per setting: its dotted
path (``<name>`` for a key you choose, ``[]`` for a list item), its description and its default.

    python -m tecb.configdoc            # rewrite config/README.md's tables from the schema
    python -m tecb.configdoc --check    # exit 1 when they differ (tests/test_config_readme.py checks the same)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
README = ROOT / "config" / "README.md"
TABLE = re.compile(r"(<!-- schema table: ([^>]*?) -->\n)(.*?)(<!-- end schema table -->)", flags=re.S)


def load_schema(path=SCHEMA) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def settings(schema: dict, node: dict | None = None, prefix: str = ""):
    """``(dotted key, sub-schema)`` of every setting under ``node`` (default: the whole schema), in schema order:
    properties, the entries of a mapping you name (``<name>``) and the fields of list items (``[]``)."""
    node = _resolve(schema, schema if node is None else node)
    for key, sub in node.get("properties", {}).items():
        sub = _resolve(schema, sub)
        yield prefix + key, sub
        yield from settings(schema, sub, f"{prefix}{key}.")
        entries = sub.get("additionalProperties")
        if isinstance(entries, dict) and _resolve(schema, entries).get("properties"):
            yield from settings(schema, entries, f"{prefix}{key}.<name>.")
        items = sub.get("items")
        if isinstance(items, dict) and items.get("properties"):
            yield from settings(schema, items, f"{prefix}{key}[].")


def _resolve(schema: dict, node: dict) -> dict:
    if isinstance(node, dict) and "$ref" in node:
        return schema["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def default_cell(sub: dict) -> str:
    """The default as the table shows it: YAML-like scalars, JSON mappings and lists, empty when there is none."""
    if "default" not in sub:
        return ""
    value = sub["default"]
    return f"`{value}`" if isinstance(value, str) and value else f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def table(schema: dict, top_keys: list[str]) -> str:
    """The markdown table of the settings under ``top_keys`` (top-level keys of the schema), in schema order."""
    unknown = [k for k in top_keys if k not in schema["properties"]]
    if unknown:
        raise ValueError(f"config/README.md names schema tables for keys the schema does not have: {unknown}")
    rows = ["| key | meaning | default |", "| --- | --- | --- |"]
    for top in top_keys:
        node = {"properties": {top: schema["properties"][top]}}
        for key, sub in settings(schema, node):
            rows.append(f"| `{key}` | {_cell(sub.get('description', ''))} | {default_cell(sub)} |")
    return "\n".join(rows) + "\n"


def render(text: str, schema: dict) -> str:
    """``text`` (config/README.md) with every marked table rendered from ``schema``."""
    return TABLE.sub(lambda m: m.group(1) + table(schema, m.group(2).split()) + m.group(4), text)


def tabled_keys(text: str) -> list[str]:
    """The top-level keys of the marked tables, in the order the README lists them."""
    return [key for m in TABLE.finditer(text) for key in m.group(2).split()]


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    text = README.read_text(encoding="utf-8")
    rendered = render(text, load_schema())
    if "--check" in args:
        if rendered != text:
            print(f"{README}: its key tables differ from {SCHEMA}; run python -m tecb.configdoc", file=sys.stderr)
            return 1
        return 0
    README.write_text(rendered, encoding="utf-8")
    print(f"{README}: {len(tabled_keys(text))} top-level keys' tables rendered from the schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
