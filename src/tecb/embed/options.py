"""Values every model kind's settings use, below :mod:`tecb.embed.spec` and :mod:`tecb.embed.mteb_model` (both
import them; spec imports mteb_model for ``kind: mteb``, so they cannot live in spec)."""

from __future__ import annotations

from collections.abc import Mapping

#: Texts a transformer model sorts by length and encodes together, written as one row group (``embed.chunk_size``).
#: Another chunk size may change the vectors at float rounding level (other batches): it is then a setting.
CHUNK_SIZE = 4096


def resolve_prompt(prompt, dataset: str | None) -> str | None:
    """A literal prompt: the string itself, or from a mapping ``{dataset: prompt, default: prompt}``."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Mapping):
        if dataset is not None and dataset in prompt:
            return prompt[dataset]
        return prompt.get("default")
    raise TypeError(f"prompt must be a string or a mapping of dataset -> string, not {type(prompt).__name__}")
