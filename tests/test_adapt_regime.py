"""The training regime stated and fixed (issue 54 item 2): word embeddings frozen on request, added heads at their
own learning rate, the kept model's steps under model selection, and Table 6's ``ran`` and ``steps`` saying so."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_adapt_methods import (  # noqa: E402
    base_model,  # noqa: F401  (the fixture: a tiny BERT saved as a sentence-transformers folder)
    settings_for,
    topic_corpus,
    training_data,
)

from tecb.adapt import training  # noqa: E402
from tecb.adapt.training import TrainingRun, train  # noqa: E402
from tecb.report.adapt_tables import steps_shown, what_ran  # noqa: E402


def _weights(folder):
    from sentence_transformers import SentenceTransformer

    return {k: v.detach().clone() for k, v in SentenceTransformer(str(folder), device="cpu").state_dict().items()}


def _train(base, method, out, **change):
    texts, labels = topic_corpus(8, 0)
    settings = {"projection_dim": 256} if method == "random_head" else settings_for(method)
    run = TrainingRun(method=method, base_model_dir=base, data=training_data(texts, labels),
                      settings={**settings, **change}, seed=3)  # fmt: skip
    return train(run, device="cpu", output_dir=out, eval_every=None, evaluate=None)


@pytest.mark.slow
def test_frozen_word_embeddings_stay_and_everything_else_trains(base_model, tmp_path):  # noqa: F811
    base = _weights(base_model)
    result = _train(base_model, "simcse", tmp_path / "frozen", freeze_word_embeddings=True)
    after = _weights(tmp_path / "frozen")
    words = [k for k in base if k.endswith("word_embeddings.weight")]
    assert len(words) == 1
    assert torch.equal(after[words[0]], base[words[0]])  # not one row moved
    moved = [k for k in base if k not in words and not torch.equal(after[k], base[k])]
    assert any("position_embeddings" in k for k in moved) and any("encoder.layer" in k for k in moved)
    counts = result["parameters"]
    assert counts["word_embeddings_frozen"] == base[words[0]].numel()
    assert counts["trained"] == counts["total"] - counts["word_embeddings_frozen"]
    ran = what_ran("simcse", result)
    assert f"word embeddings frozen ({counts['trained'] / 1e6:.1f} M of {counts['total'] / 1e6:.1f} M" in ran
    # the default trains them, and says so
    free = _train(base_model, "simcse", tmp_path / "free")
    assert not torch.equal(_weights(tmp_path / "free")[words[0]], base[words[0]])
    assert free["parameters"]["trained"] == free["parameters"]["total"]
    assert f"all {free['parameters']['total'] / 1e6:.1f} M weights trained (word embeddings too)" in what_ran(
        "simcse", free
    )


@pytest.mark.slow
def test_a_head_at_its_own_learning_rate_is_its_own_parameter_group(base_model, tmp_path):  # noqa: F811
    """COB's Dense head at head_lr: the optimizer's groups hold the encoder at lr and the head at head_lr, and the
    head moves further than at the encoder's rate (same seed, same start)."""
    seen = {}
    original = training._optimizer

    def spy(phase, model, device):
        params, optimizer = original(phase, model, device)
        seen.setdefault("groups", [(g["lr"], sum(p.numel() for p in g["params"])) for g in optimizer.param_groups])
        return params, optimizer

    training._optimizer = spy
    try:
        fast = _train(base_model, "cob", tmp_path / "fast", head_lr=1e-2, lr=1e-4, validation_fraction=0)
    finally:
        training._optimizer = original
    width = training.load_base(str(base_model), device="cpu").get_sentence_embedding_dimension()
    head_size = width * 256 + 256  # Dense(width -> 256): weight and bias
    lrs = {lr for lr, n in seen["groups"]}
    assert lrs == {1e-4, 1e-2}
    assert sum(n for lr, n in seen["groups"] if lr == 1e-2) == head_size
    assert f"head Dense({width} -> 256, tanh) at lr 0.01" in what_ran("cob", fast)
    _train(base_model, "cob", tmp_path / "slow", lr=1e-4, validation_fraction=0)
    start = _train(base_model, "random_head", tmp_path / "start")  # the head both start from (same seed)
    assert start["steps"] == 0

    def head(folder):
        return next(v for k, v in _weights(folder).items() if k.endswith("linear.weight"))

    moved_fast = float((head(tmp_path / "fast") - head(tmp_path / "start")).abs().max())
    moved_slow = float((head(tmp_path / "slow") - head(tmp_path / "start")).abs().max())
    assert moved_fast > 10 * moved_slow > 0


def test_no_head_lr_keeps_the_optimizer_as_it_was(base_model):  # noqa: F811
    phase = training.Phase(name="p", batches=lambda rng: [], loss=lambda b: None, lr=2e-5, epochs=1,
                           warmup_ratio=0, weight_decay=0.01, max_grad_norm=1)  # fmt: skip
    model = training.load_base(str(base_model), device="cpu")
    _, optimizer = training._optimizer(phase, model, "cpu")
    assert [(g["lr"], g["weight_decay"]) for g in optimizer.param_groups] == [(2e-5, 0.01), (2e-5, 0.0)]


@pytest.mark.slow
def test_the_steps_cell_shows_the_kept_models_steps(base_model, tmp_path):  # noqa: F811
    result = _train(base_model, "cob", tmp_path / "m", epochs=3, validation_fraction=0.25)
    info = result["phases"]["cob"]
    at, chosen = info["steps_at_epoch"], info["selected_epoch"]
    assert len(at) == 4 and at[0] == 0 and at[-1] == result["steps"]
    assert result["steps_kept"] == at[chosen]
    assert steps_shown({"steps": 232, "steps_kept": 58}) == "58 of 232"
    assert steps_shown({"steps": 232, "steps_kept": 232}) == "232"
    assert steps_shown({"steps": 171}) == "171"  # a record from before kept steps
    assert training.kept_steps([], 7) == 7


def test_kept_steps_subtracts_the_epochs_after_the_selected_one():
    phase = training.Phase(name="cob", batches=lambda rng: [], loss=lambda b: None, lr=1, epochs=3,
                           warmup_ratio=0, weight_decay=0, max_grad_norm=0)  # fmt: skip
    phase.info.update(steps_at_epoch=[0, 29, 58, 87, 116], selected_epoch=1)
    assert training.kept_steps([phase], 116) == 29
    phase.info["selected_epoch"] = 0  # the base kept: no step behind it
    assert training.kept_steps([phase], 116) == 0
    assert np.isclose(training.kept_steps([phase], 116), 0)
