"""What the remote code of the current hub models in ``config/modern.yaml`` imports (issue 22.4).

Models with ``trust_remote_code`` run Python from their hub repositories (pinned by revision; code in another
repository is copied in by the prefetch, :mod:`tecb.embed.hub`). That code needs packages the embed
environment must provide and transformers symbols that must still exist in the pinned transformers. This table
lists, per model, the modules and names its modelling code imports at module level (read from the code at the
revisions in ``config/modern.yaml``), and the environment that provides them; :func:`missing_imports` checks
them offline with ``importlib`` (tests/test_model_kinds.py), so a model that cannot load in an environment is
found before a GPU job fails on it.
"""

from __future__ import annotations

import importlib
import importlib.util

#: model key -> {"code": where its modelling code lives, "env": the envs/*.yaml its embed jobs use,
#: "imports": {module: [names imported from it]} (an empty list: ``import module``)}
REMOTE_CODE = {
    "jina-embeddings-v3": {
        "code": "jinaai/xlm-roberta-flash-implementation (modeling_lora.py, modeling_xlm_roberta.py, embedding.py, "
        "mha.py, mlp.py, block.py, rotary.py, xlm_padding.py)",
        "env": "envs/embed-transformers4.yaml",
        "imports": {
            "einops": ["rearrange", "repeat"],
            "torch": [],
            "numpy": [],
            "transformers": ["AutoTokenizer", "AutoConfig", "PretrainedConfig", "PreTrainedModel"],
            "transformers.modeling_outputs": [
                "BaseModelOutput",
                "BaseModelOutputWithPooling",
                "BaseModelOutputWithPoolingAndCrossAttentions",
                "MaskedLMOutput",
                "SequenceClassifierOutput",
            ],
            "transformers.models.bert.modeling_bert": ["BertForPreTrainingOutput"],
            "transformers.models.xlm_roberta.modeling_xlm_roberta": [
                "XLMRobertaLMHead",
                "create_position_ids_from_input_ids",  # removed in transformers 5: hence the transformers 4 env
            ],
        },
    },
    "gte-multilingual-base": {
        "code": "Alibaba-NLP/new-impl (modeling.py, configuration.py)",
        "env": "envs/embed-transformers4.yaml",
        "imports": {
            "torch": [],
            "transformers.activations": ["ACT2FN"],
            "transformers.modeling_outputs": [
                "BaseModelOutput",
                "BaseModelOutputWithPooling",
                "MaskedLMOutput",
                "MultipleChoiceModelOutput",
                "QuestionAnsweringModelOutput",
                "SequenceClassifierOutput",
                "TokenClassifierOutput",
            ],
            "transformers.modeling_utils": ["PreTrainedModel"],
            "transformers.utils": ["logging"],
            "transformers.configuration_utils": ["PretrainedConfig"],
        },
    },
    "nomic-embed-text-v2-moe": {
        "code": "nomic-ai/nomic-bert-2048 (modeling_hf_nomic_bert.py, configuration_hf_nomic_bert.py)",
        "env": "envs/embed.yaml",
        "imports": {
            "einops": ["rearrange", "repeat"],
            "safetensors.torch": ["load_file"],
            "torch": [],
            "numpy": [],
            "transformers": ["GPT2Config", "PreTrainedModel", "ViTConfig", "ViTModel"],
            "transformers.modeling_outputs": ["BaseModelOutputWithPast"],
            "transformers.models.bert.modeling_bert": [
                "BaseModelOutputWithPoolingAndCrossAttentions",
                "MaskedLMOutput",
                "SequenceClassifierOutput",
            ],
            "transformers.utils": [
                "SAFE_WEIGHTS_INDEX_NAME",
                "SAFE_WEIGHTS_NAME",
                "WEIGHTS_INDEX_NAME",
                "WEIGHTS_NAME",
            ],
            "transformers.utils.hub": ["cached_file", "get_checkpoint_shard_files"],
        },
    },
}


def missing_imports(imports: dict) -> list[str]:
    """``module`` or ``module.name`` entries of ``imports`` that the running environment cannot provide."""
    missing = []
    for module, names in imports.items():
        top = module.split(".")[0]
        if importlib.util.find_spec(top) is None:
            missing.append(module)
            continue
        try:
            loaded = importlib.import_module(module)
        except Exception:  # noqa: BLE001 - an import error of the module itself is what is reported
            missing.append(module)
            continue
        missing += [f"{module}.{name}" for name in names if not hasattr(loaded, name)]
    return missing
