"""Every compute job that can load a model runs offline (design §7): its script sets HF_HUB_OFFLINE=1 before its
first import, embedding, pre-training, adaptation and the tiny BERT alike; only the network rules reach the hub."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "workflow" / "scripts"
#: imports that can load a model (torch, the training and embedding code, Hugging Face libraries)
MODEL_LOADING = re.compile(
    r"^(import torch|from tecb\.adapt|from tecb\.embed\.(encode|tiny_bert|mteb_model|job)|"
    r"(from|import) (sentence_transformers|transformers))",
    re.M,
)
OFFLINE = 'os.environ["HF_HUB_OFFLINE"] = "1"'
NETWORK_SCRIPTS = {"prefetch_model.py", "download_published.py"}


def test_every_model_loading_script_sets_offline_mode_before_its_imports():
    loading = [p for p in sorted(SCRIPTS.glob("*.py")) if MODEL_LOADING.search(p.read_text())]
    assert {"pretrain.py", "adapt.py", "tiny_bert.py", "embed.py", "embed_batch.py", "embed_merge.py"} <= {
        p.name for p in loading
    }
    for path in loading:
        text = path.read_text()
        assert path.name not in NETWORK_SCRIPTS
        assert OFFLINE in text, f"{path.name}: loads models but does not set HF_HUB_OFFLINE=1"
        first_import = re.search(r"^(from tecb|import torch|from \w+ import|import (?!os\b)\w+)", text, re.M)
        assert text.index(OFFLINE) < first_import.start(), f"{path.name}: HF_HUB_OFFLINE is set after an import"
