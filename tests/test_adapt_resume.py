"""A training-for-clustering job killed mid-way resumes from its last saved state and ends with the bytes of a job
that ran through (issue 42 item 5): the adapted model's files, the history (losses and scores per step), what each
phase reports (COB's model selection among it) and the caller's evaluation records; a state of another job is
ignored. The same mechanism as adaptive pre-training's (tecb.adapt.resume; tests/test_pretrain.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import sigkill_once_written  # noqa: E402
from test_adapt_methods import (  # noqa: E402
    base_model,  # noqa: F401  (the fixture: a tiny BERT saved as a sentence-transformers folder)
    settings_for,
    topic_corpus,
    training_data,
    tree_digest,
)

from tecb.adapt import training  # noqa: E402
from tecb.adapt.training import TrainingData, TrainingRun, train  # noqa: E402


class Killed(Exception):
    """Stands for SIGKILL in the process: the run stops at once, nothing after it runs."""


class Recorder:
    """An ``evaluate`` callback with records of its own (as the workflow job's): each call's value, kept in the
    training state through :meth:`state_dict` / :meth:`load_state_dict`."""

    def __init__(self, texts):
        self.texts, self.calls = texts, []

    def __call__(self, model) -> float:
        vectors = model.encode(self.texts, batch_size=64, convert_to_numpy=True)
        value = float(np.round(np.abs(vectors).mean(), 6)) + len(self.calls)
        self.calls.append(value)
        return value

    def state_dict(self) -> dict:
        return {"calls": list(self.calls)}

    def load_state_dict(self, state: dict) -> None:
        self.calls = list(state["calls"])


#: per method: settings, the optimizer steps between saves, the step the first run is killed at (the last state
#: saved before it is where the second run starts)
CASES = {
    # plain steps: 4 batches an epoch, 3 epochs; killed at step 7, resumed from step 6 (mid-epoch)
    "simcse": ({"batch_size": 8, "epochs": 3}, 3, 7),
    # SimCSE's own crop generator
    "simcse-cropping": ({"batch_size": 8, "epochs": 3, "augmentation": "cropping", "crop_ratio": 0.5}, 3, 8),
    # the centroids and step counter of the in-batch k-means (clustering starts in the first epoch)
    "clusterns": ({"batch_size": 16, "epochs": 4}, 3, 5),
    # K and sigma resolved from the step-0 batch: a resumed run keeps them (resolving anew would see other weights)
    "clusterns-auto": ({"batch_size": 16, "epochs": 4, "n_clusters": "auto", "similarity_threshold": "auto"}, 3, 5),
    # epochs with model selection: 4 usable instances an epoch, 3 epochs; resumed from step 6, mid-epoch 2
    "cob": ({"epochs": 3, "validation_fraction": 0.25}, 3, 8),
    # resumed from the end of epoch 1 (step 4), its selection step not yet taken
    "cob-epoch-end": ({"epochs": 3, "validation_fraction": 0.25}, 4, 6),
    # 4 triplets an epoch, 2 epochs, with model selection
    "triplet": ({"batch_size": 1, "epochs": 2}, 3, 5),
    # two phases (2 pair steps, then 4 siamese epochs of 2), killed in the second: the pair phase's heads and info kept
    "argue": ({"batch_size": 16, "siamese_batch_size": 16, "epochs": 1, "siamese_epochs": 4}, 3, 7),
}


def _run(base, case: str, out: Path, state: Path | None, *, kill_at: int | None = None, lines=None) -> dict:
    settings_change, every, _ = CASES[case]
    method = case.split("-")[0]
    texts, labels = topic_corpus(8, 0)
    run = TrainingRun(
        method=method,
        base_model_dir=base,
        data=training_data(texts, labels),
        settings={**settings_for(method), **settings_change},
        seed=3,
        resume_path=state,
        resume_every=every if state else None,
    )
    recorder = Recorder(texts[:12])
    step, steps = training._optimizer_step, []

    def counted(*args):
        if kill_at is not None and len(steps) == kill_at:
            raise Killed
        steps.append(1)
        return step(*args)

    training._optimizer_step = counted
    try:
        result = train(run, device="cpu", output_dir=out, eval_every=2, evaluate=recorder, log=lines.append)
    finally:
        training._optimizer_step = step
    return {"result": result, "calls": recorder.calls, "steps": len(steps)}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_killed_training_resumes_to_the_same_bytes(case, base_model, tmp_path):  # noqa: F811
    """Killed after k optimizer steps, the same run started again continues from the last saved state (it says
    so, and makes only the steps left) and ends with the model files, history, phase reports and evaluation
    records of a run that went through; the state file is gone at the end."""
    _, every, kill_at = CASES[case]
    straight = _run(base_model, case, tmp_path / "straight", None, lines=[])
    state = tmp_path / "m.resume.pt"
    with pytest.raises(Killed):
        _run(base_model, case, tmp_path / "m", state, kill_at=kill_at, lines=[])
    assert state.exists() and not (tmp_path / "m").exists()
    lines = []
    again = _run(base_model, case, tmp_path / "m", state, lines=lines)
    saved_at = kill_at // every * every
    resumed = [line for line in lines if line.startswith(f"resumed from {state}: ")]
    assert resumed and resumed[0].endswith(f", {saved_at} optimizer steps done"), lines
    total = straight["result"]["steps"]
    assert total > kill_at and again["steps"] == total - saved_at  # only the steps left were made
    assert tree_digest(tmp_path / "m") == tree_digest(tmp_path / "straight")
    for key in ("history", "phases", "steps", "settings"):
        assert again["result"][key] == straight["result"][key], key
    assert again["calls"] == straight["calls"]
    # the job's time counts every process: the killed one's up to its last save, then this one's
    assert (straight["result"]["processes"], straight["result"]["earlier_seconds"]) == (1, 0.0)
    assert again["result"]["processes"] == 2 and again["result"]["earlier_seconds"] > 0
    assert len(straight["calls"]) >= 3  # step 0, scores along the way and the end
    if case == "clusterns-auto":
        info = again["result"]["phases"]["clusterns"]
        assert info["clustering_started_at"] == 0 and info["n_clusters_auto"] and info["similarity_threshold_auto"]
    if case.startswith("cob"):
        info = again["result"]["phases"]["cob"]
        assert len(info["validation"]) == 4 and info["selected_epoch"] is not None
    assert not state.exists()


@pytest.mark.slow
def test_a_state_of_another_run_is_ignored(base_model, tmp_path):  # noqa: F811
    """A state written for other settings (another learning rate) is not picked up: the run says so, starts from
    the beginning and ends as a run that had no state; a state of the same run whose file is damaged likewise."""
    state = tmp_path / "m.resume.pt"
    with pytest.raises(Killed):
        _run(base_model, "simcse", tmp_path / "killed", state, kill_at=4, lines=[])
    assert state.exists()
    texts, labels = topic_corpus(8, 0)
    settings = {**settings_for("simcse"), **CASES["simcse"][0]}
    outputs = {}
    for name, lr, path in (("other", 5e-4, state), ("plain", 5e-4, None)):
        lines = []
        run = TrainingRun(method="simcse", base_model_dir=base_model, data=training_data(texts, labels),
                          settings={**settings, "lr": lr}, seed=3, resume_path=path, resume_every=3 if path else None)  # fmt: skip
        outputs[name] = train(run, device="cpu", output_dir=tmp_path / name, eval_every=None, evaluate=None,
                              log=lines.append)  # fmt: skip
        if path is not None:
            assert any("belongs to other settings or data; ignored" in line for line in lines), lines
            assert not any(line.startswith("resumed from") for line in lines)
    assert tree_digest(tmp_path / "other") == tree_digest(tmp_path / "plain")
    assert outputs["other"]["history"] == outputs["plain"]["history"]
    state.write_bytes(b"not a state")
    lines = []
    _run(base_model, "simcse", tmp_path / "damaged", state, lines=lines)
    assert any("unreadable" in line for line in lines) and not state.exists()
    _run(base_model, "simcse", tmp_path / "straight", None, lines=[])
    assert tree_digest(tmp_path / "damaged") == tree_digest(tmp_path / "straight")


def test_a_workflow_job_keeps_its_state_beside_its_model_every_resume_every_steps():
    """How the rule's job runs, resolved from the job (not a param: changing it reruns nothing)."""
    from types import SimpleNamespace

    from tecb.adapt.jobs import resume_of

    job = SimpleNamespace(output=SimpleNamespace(model="results/r/checkpoints/m/cob-lodo/D/seed1"),
                          config={"adapt": {"resume_every": 7}})  # fmt: skip
    assert resume_of(job) == ("results/r/checkpoints/m/cob-lodo/D/seed1.resume.pt", 7)


def test_resume_every_is_required_with_a_resume_path(base_model, tmp_path):  # noqa: F811
    run = TrainingRun(method="simcse", base_model_dir=base_model, data=TrainingData(texts=("a b", "c d")),
                      settings=settings_for("simcse"), seed=0, resume_path=tmp_path / "s.pt")  # fmt: skip
    with pytest.raises(ValueError, match="resume_every"):
        train(run, device="cpu", output_dir=tmp_path / "m", eval_every=None, evaluate=None)


JOB = """
import sys, time
from pathlib import Path
from tecb.adapt import jobs, training

base, root, out, speed = sys.argv[1:5]
if speed == "slow":  # time for the test to kill the job mid-way (the test's own patch, in this process only)
    step = training._optimizer_step
    training._optimizer_step = lambda *args: (time.sleep(0.3), step(*args))[1]
settings = {**training.method_module("cob").DEFAULTS, "lr": 1e-3, "epochs": 3, "max_length": 32,
            "instance_size": 8, "validation_fraction": 0.25, "lambda_": 1.0, "regularization": 0.1}
job = jobs.Job("cob", "disjoint", "D", 3, settings, {"min_categories": 4, "rounds": 1})
scoring = jobs.Scoring({"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}}, 42, 32, None, 2)
files = jobs.Files(model_dir=base, datasets={"D": ("src", Path(root) / "texts.parquet", Path(root) / "splits.parquet")},
                   scores=Path(out) / "scores.parquet", model_out=Path(out) / "model", timings=Path(out) / "t.json",
                   resume=Path(out) / "model.resume.pt")
jobs.run(job, scoring=scoring, files=files, encoder=None, device="cpu", resume_every=2, log=lambda m: print(m, flush=True))
"""


@pytest.mark.slow
def test_a_workflow_job_killed_with_sigkill_resumes_to_the_same_bytes(base_model, tmp_path):  # noqa: F811
    """The workflow's entry point (tecb.adapt.jobs.run, COB under the label-disjoint protocol, scored every 2 steps):
    kill -9 once its state exists, the same job started again says it resumed and writes the score file,
    ``protocol.json`` and model of a job that ran through, byte for byte; no state is left."""
    from tecb import io

    label_of = dict(zip(*topic_corpus(16, 0)))  # unique texts, each with its topic
    texts, labels = list(label_of), list(label_of.values())
    io.write_dataset(texts, [(list(range(len(texts))), labels)], tmp_path / "texts.parquet",
                     tmp_path / "splits.parquet", "D")  # fmt: skip
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = {**os.environ, "PYTHONPATH": str(Path(training.__file__).parents[2])}

    def start(out: Path, speed: str) -> subprocess.Popen:
        out.mkdir(exist_ok=True)
        args = [sys.executable, str(script), str(base_model), str(tmp_path), str(out), speed]
        return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)

    straight = start(tmp_path / "straight", "fast")
    assert straight.wait() == 0
    killed = start(tmp_path / "killed", "slow")
    state = tmp_path / "killed" / "model.resume.pt"
    sigkill_once_written(killed, state)
    assert state.exists() and not (tmp_path / "killed" / "scores.parquet").exists()
    again = start(tmp_path / "killed", "fast")
    log = again.communicate()[0]
    assert again.returncode == 0, log
    assert "resumed from " in log and "evaluation 0:" not in log, log  # step 0 not scored again
    assert not state.exists()
    for name in ("scores.parquet", "model/protocol.json"):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "straight" / name).read_bytes(), name
    assert tree_digest(tmp_path / "killed" / "model") == tree_digest(tmp_path / "straight" / "model")
