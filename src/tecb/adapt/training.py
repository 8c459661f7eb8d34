"""The shared training loop of the embedding-training methods (``simcse``, ``clusterns``, ``cob``, ``triplet``,
``argue``): one entry point, :func:`train`, that loads a sentence-transformers model, runs the method's phases
under seeded generators and deterministic kernels, scores it with a caller's ``evaluate`` and saves it atomically.

Each method lives in its own module (``tecb.adapt.<method>``) with a module-level ``DEFAULTS`` mapping (the
paper's hyper-parameters; the config schema copies them, it is the one home of defaults at run time) and a
``phases(model, data, settings, rng, device)`` function returning a list of :class:`Phase`. A phase is one
optimisation run (its own optimizer, learning rate, warm-up and epochs): most methods have one; ``argue`` has two
(pair-objective pre-training, then siamese fine-tuning).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from tecb import io
from tecb.adapt import resume
from tecb.adapt.runtime import mixed_precision, resolve_device, seeded_global_rngs

METHODS = ("simcse", "clusterns", "cob", "triplet", "argue")
# controls: jobs that train nothing, run under the supervised variants so that they are evaluated on the splits of
# the methods they control (random_head: the head COB and triplet start from, :mod:`tecb.adapt.random_head`)
CONTROLS = ("random_head",)

# settings every method's DEFAULTS holds (the loop reads them)
COMMON_KEYS = ("lr", "batch_size", "epochs", "max_length", "warmup_ratio", "weight_decay", "max_grad_norm")


@dataclass(frozen=True)
class TrainingData:
    """What one method sees; built by the protocol code (leak-free by construction there)."""

    texts: tuple[str, ...] = ()  # unlabelled texts (simcse, clusterns)
    instances: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()  # (texts, labels) clustering instances
    pairs: tuple[tuple[str, str, int, str], ...] = ()  # (text_a, text_b, label 0/1, objective name) (argue)
    objective: str = ""  # argue: the objective of the pair phase (one model per objective); "" = every pair's


@dataclass(frozen=True, kw_only=True)
class TrainingRun:
    """What one :func:`train` call trains: ``method`` from ``base_model_dir`` (a folder, or the model's resolved
    embed settings, loaded by :func:`load_base` as the embed stage loads it) on ``data`` with the method's
    ``settings`` (every key of its ``DEFAULTS``) and training ``seed``.

    ``resume_path``: where the run keeps its training state (weights, optimizer, schedule, every random generator
    and the methods' own state, the batch order and position, the history and scores so far, the model selection's
    bookkeeping) every ``resume_every`` optimizer steps; a run started again after being killed continues from it
    and ends with the same bytes as one that ran through (None: no state kept). The state is keyed by the run's
    content (:func:`run_fingerprint`, with ``resume_key``: the caller's digest of what else decides the result,
    e.g. the evaluation); one of another run is ignored, saying so. The file is removed when the run ends."""

    method: str
    base_model_dir: str | Path | dict
    data: TrainingData
    settings: dict
    seed: int
    resume_path: str | Path | None = None
    resume_every: int | None = None
    resume_key: str = ""


@dataclass
class Phase:
    """One optimisation run of a method.

    ``batches(rng)`` returns the list of batches of one epoch (drawn with ``rng``); ``loss(batch)`` returns the
    scalar loss of one batch (under autocast on CUDA); ``modules`` are trained beside the encoder (heads).
    """

    name: str
    batches: Callable[[np.random.Generator], list]
    loss: Callable[[object], object]
    lr: float
    epochs: int
    warmup_ratio: float
    weight_decay: float
    max_grad_norm: float
    modules: list = field(default_factory=list)
    train_encoder: bool = True
    info: dict = field(default_factory=dict)  # what the method reports (triplets mined, clustering start, ...)
    # heads added inside the model (COB's Dense head): trained with ``modules`` at ``head_lr`` (None: at ``lr``)
    heads: list = field(default_factory=list)
    head_lr: float | None = None
    min_steps: int = 0  # the training length in the data's terms: epochs added until this many steps (epochs_for)
    # model selection: a score of the model on held-out training-side data (higher is better), taken before the
    # first epoch and after each; the phase ends with the weights of its best epoch (COB's best-validation rule)
    validate: Callable[[], float] | None = None
    # the loss of a batch where the model cannot tell anything apart (uniform predictions): the yardstick for the
    # step-0 loss (None where the method's loss has no such value)
    chance_loss: Callable[[object], float] | None = None
    # what the method changes while it trains beside the weights and ``info``: its own NumPy generators, dicts and
    # objects with state_dict / load_state_dict (ClusterNS's centroids), saved and put back by a resumed run
    state: list = field(default_factory=list)


def optimizer_settings(settings: dict, prefix: str = "") -> dict:
    """The optimisation keywords of a :class:`Phase` from a method's ``settings``: learning rate, epochs and warm-up
    (``prefix``: a second phase's own, e.g. argue's ``siamese_lr``), weight decay and gradient clipping; the added
    heads' learning rate where the method has one (``head_lr``, None: the encoder's)."""
    out = {
        "lr": settings[f"{prefix}lr"],
        "epochs": settings[f"{prefix}epochs"],
        "warmup_ratio": settings[f"{prefix}warmup_ratio"],
        "weight_decay": settings["weight_decay"],
        "max_grad_norm": settings["max_grad_norm"],
    }
    if not prefix and settings.get("head_lr") is not None:
        out["head_lr"] = float(settings["head_lr"])
    return out


#: the setting (``adapt.freeze_word_embeddings``, put into a job's settings where true) that keeps the encoder's
#: word-embedding rows at their base values
FREEZE_KEY = "freeze_word_embeddings"


def freeze_word_embeddings(model) -> dict:
    """Keep the transformer's input word-embedding matrix out of training (``requires_grad`` False, so no
    optimizer holds it); position and type embeddings and every other weight still train. Returns what the
    job's record says: the frozen rows' parameters and the trained parameters left."""
    first = model[0]
    auto = getattr(first, "auto_model", None)
    if auto is None or not hasattr(auto, "get_input_embeddings"):
        raise ValueError(f"{FREEZE_KEY}: the model's first module {type(first).__name__} has no word embeddings")
    words = auto.get_input_embeddings().weight
    words.requires_grad_(False)
    return {"word_embeddings_frozen": int(words.numel())}


def parameter_counts(model) -> dict:
    """The encoder's parameters: ``total`` and ``trained`` (``requires_grad``)."""
    params = list(model.parameters())
    return {
        "total": int(sum(p.numel() for p in params)),
        "trained": int(sum(p.numel() for p in params if p.requires_grad)),
    }


def method_module(method: str):
    """The module implementing ``method`` (``tecb.adapt.simcse`` ..., or a control: ``tecb.adapt.random_head``)."""
    if method not in METHODS + CONTROLS:
        raise ValueError(f"unknown training method {method!r}; known: {', '.join(METHODS + CONTROLS)}")
    return importlib.import_module(f"tecb.adapt.{method}")


def check_settings(method: str, settings: dict) -> None:
    """Raise naming every key of the method's ``DEFAULTS`` that ``settings`` lacks (the schema fills them).

    Other keys pass (the protocol's own keys may share the mapping; the schema rejects misspelt ones)."""
    module = method_module(method)
    missing = sorted(set(module.DEFAULTS) - set(settings))
    if missing:
        raise ValueError(f"adapt method {method!r}: settings lack {', '.join(missing)} (the config schema fills them)")


@contextlib.contextmanager
def deterministic_torch():
    """``torch.use_deterministic_algorithms(True)`` for the block (warn-only where an op has no deterministic
    kernel), then the caller's setting back."""
    import torch

    before, warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn)


def encode_features(model, texts: list[str], device: str) -> dict:
    """Tokenise ``texts`` for ``model`` (its max_seq_length) and move the tensors to ``device``; the benchmark's
    prompt (:func:`load_base`) is prepended as ``model.encode`` prepends it (sentence-transformers' ``preprocess``,
    which also marks the prompt's tokens for a pooling that leaves them out)."""
    prompt = getattr(model, "tecb_prompt", None)
    if prompt:
        features = model.preprocess(list(texts), prompt=prompt)
    else:
        prepare = getattr(model, "preprocess", None) or model.tokenize
        features = prepare(list(texts))
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}


def load_base(encoder: dict | str, *, device: str, max_seq_length: int | None = None, dtype: str = "float32"):
    """The base model as the embed stage loads it: ``encoder`` is the model's resolved settings
    (:func:`tecb.embed.spec.encoder_settings`: path, pooling, normalize, trust_remote_code, model/tokenizer
    kwargs, prompt) or a bare sentence-transformers folder (no settings). ``max_seq_length`` replaces the
    settings' (training may truncate shorter); ``model.tecb_prompt`` holds the prompt the embed stage prepends."""
    from tecb.embed.encode import effective_prompt, load_encoder

    settings = {"path": str(encoder)} if isinstance(encoder, (str, Path)) else dict(encoder)
    if max_seq_length:
        settings["max_seq_length"] = int(max_seq_length)
    model = load_encoder(settings, device, dtype)
    model.tecb_prompt = effective_prompt(model, settings.get("prompt"), settings.get("prompt_name"))
    return model


def add_projection_head(model, out_features: int | None, device: str) -> dict:
    """The COB authors' bounded projection head: a ``Dense(out_features, tanh)`` module right after the model's
    pooling (before a ``Normalize`` module, if it has one), trained with the encoder and saved with the adapted
    model; ``out_features`` 0 or None: no head. Its weights come from torch's generator (seeded by :func:`train`).
    Returns what the phase reports."""
    from collections import OrderedDict

    import torch
    from sentence_transformers.sentence_transformer import modules as st_modules

    if not out_features:
        return {"projection_head": None}
    current = list(model)
    at = max((i for i, m in enumerate(current) if type(m).__name__ == "Pooling"), default=None)
    if at is None:
        raise ValueError(f"no Pooling module to put the projection head after: {[type(m).__name__ for m in current]}")
    width = (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()
    head = st_modules.Dense(width, int(out_features), activation_function=torch.nn.Tanh()).to(device)
    ordered = current[: at + 1] + [head] + current[at + 1 :]
    model._modules = OrderedDict((str(i), m) for i, m in enumerate(ordered))
    model.__dict__.setdefault("tecb_heads", []).append(head)  # a plain list: no submodule registered (heads_of)
    return {"projection_head": f"Dense({width} -> {int(out_features)}, tanh)"}


def heads_of(model) -> list:
    """The heads :func:`add_projection_head` put into ``model`` (trained at a method's ``head_lr``)."""
    return list(model.__dict__.get("tecb_heads", []))


def embed(model, texts: list[str], device: str):
    """Sentence embeddings of ``texts`` with gradients (the model's own pooling; dropout if in train mode)."""
    return model(encode_features(model, texts, device))["sentence_embedding"]


def hold_out(instances, fraction: float, rng: np.random.Generator) -> tuple[list, list]:
    """``(training, validation)``: a seeded ``fraction`` of the labelled clustering instances held out for model
    selection (at least one where ``fraction`` > 0 and there are two or more; 0: none held out)."""
    instances = list(instances)
    if not 0 <= float(fraction) < 1:
        raise ValueError(f"validation_fraction must be in [0, 1), got {fraction}")
    n = int(round(float(fraction) * len(instances)))
    if float(fraction) > 0 and len(instances) > 1:
        n = max(n, 1)
    held = set(rng.permutation(len(instances))[:n].tolist())
    return [x for i, x in enumerate(instances) if i not in held], [x for i, x in enumerate(instances) if i in held]


def validation_score(model, instances, device: str, seed: int = 0) -> float:
    """Mean V-measure of k-means (k = the instance's number of labels) on each held-out instance's embeddings:
    the benchmark's metric on training-side data, for model selection."""
    import torch
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    scores = []
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for texts, labels in instances:
            x = embed(model, list(texts), device).float().cpu().numpy().astype(np.float64)
            k = len(set(labels))
            predicted = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(x)
            scores.append(v_measure_score(list(labels), predicted))
    model.train(was_training)
    return float(np.mean(scores)) if scores else float("nan")


def chunked(order, size: int) -> list:
    return [order[i : i + size] for i in range(0, len(order), size)]


@dataclass(frozen=True)
class RunOptions:
    """How :func:`train` runs, beside what it trains: ``progress_seconds`` between progress lines,
    ``save_max_length`` and ``job_started`` (see :func:`train`)."""

    progress_seconds: float = 30.0
    save_max_length: int | None = None
    job_started: float | None = None


def train(
    run: TrainingRun,
    *,
    device: str,
    output_dir: str | Path,
    eval_every: int | None,
    evaluate: Callable | None,
    log: Callable[[str], None] | None = None,
    options: RunOptions = RunOptions(),
) -> dict:
    """Train ``run`` (:class:`TrainingRun`), save the adapted model to ``output_dir`` (a sentence-transformers
    folder, written atomically) and return the history:
    ``{"method", "steps", "seconds", "device", "precision", "history": [{"step", "phase", "loss", "score"?}],
    "settings", "phases"}`` (``phases``: what each phase reports, e.g. ClusterNS's first clustering step). ``evaluate(model)``, if given, is called at step 0, every ``eval_every`` optimizer steps and
    after the last step (a run without an update, a control: after its phases, recorded as step 1); its value is
    stored as ``"score"``. ``log`` (the job's log) gets a line per phase (its
    steps) and progress lines (step / total, loss, elapsed, ETA) at its first and last step and every
    ``options.progress_seconds`` in between. ``options`` (:class:`RunOptions`): ``save_max_length``: the sequence length the adapted model is saved with (the
    benchmark's; None: the training length). ``job_started``: the ``time.perf_counter()`` at which the calling
    process began the job (None: now); a resumed run returns ``earlier_seconds``, the wall time of the processes
    before it up to their last saved state (what a killed process spent after that save is lost), and
    ``processes``, how many processes the run took."""
    module = method_module(run.method)
    check_settings(run.method, run.settings)
    if eval_every is not None and int(eval_every) < 1:
        raise ValueError(f"eval_every must be a positive number of steps or None, got {eval_every}")
    if run.resume_path is not None and not (run.resume_every and int(run.resume_every) >= 1):
        raise ValueError(f"resume_every must be a positive number of steps with a resume_path, got {run.resume_every}")
    device = resolve_device(device)
    with seeded_global_rngs(run.seed), deterministic_torch():
        return _train(
            module,
            replace(run, settings=dict(run.settings)),
            device,
            output_dir,
            eval_every,
            evaluate,
            Progress(log, options.progress_seconds),
            replace(options, job_started=time.perf_counter() if options.job_started is None else options.job_started),
        )


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Progress lines of one phase: ``phase NAME: step s/total (p %), loss L, elapsed H:MM:SS, ETA H:MM:SS``."""

    def __init__(self, log, every_seconds: float):
        self.log, self.every = log, float(every_seconds)
        self.name, self.total, self.done, self.started, self.last = "", 0, 0, 0.0, 0.0

    def start(self, name: str, total: int, detail: str) -> None:
        self.name, self.total, self.done = name, int(total), 0
        self.started = self.last = time.perf_counter()
        if self.log:
            self.log(f"phase {name}: {total} optimizer steps ({detail})")

    def line(self, done: int, loss, now: float | None = None) -> str:
        """The progress line after ``done`` of the phase's steps (``now``: the clock, for tests)."""
        elapsed = (time.perf_counter() if now is None else now) - self.started
        eta = elapsed / done * (self.total - done) if done else float("nan")
        shown = "n/a" if loss is None else f"{loss:.4f}"
        share = 100.0 * done / self.total if self.total else 100.0
        eta_text = _hms(eta) if math.isfinite(eta) else "?"
        return (
            f"phase {self.name}: step {done}/{self.total} ({share:.0f} %), loss {shown}, "
            f"elapsed {_hms(elapsed)}, ETA {eta_text}"
        )

    def step(self, loss) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.log and (self.done in (1, self.total) or now - self.last >= self.every):
            self.last = now
            self.log(self.line(self.done, loss, now))


def epochs_for(phase: Phase, rng: np.random.Generator, max_epochs: int = 1000) -> list[list]:
    """The phase's epochs of batches: its ``epochs``, then more until it makes at least ``min_steps`` optimizer steps
    (the rule that scales training to the dataset: a paper's single epoch over 10^6 sentences is thousands of steps,
    one epoch over a few thousand German titles a few dozen). At most ``max_epochs``; an epoch without a batch
    stops the loop."""
    epochs = [phase.batches(rng) for _ in range(int(phase.epochs))]
    while phase.min_steps and sum(len(b) for b in epochs) < int(phase.min_steps) and len(epochs) < max_epochs:
        epochs.append(phase.batches(rng))
        if not epochs[-1]:
            break
    return epochs


def _train(module, run: TrainingRun, device, output_dir, eval_every, evaluate, progress, options: RunOptions):
    method, settings = run.method, run.settings
    save_length, job_started = options.save_max_length, options.job_started
    model = load_base(run.base_model_dir, device=device, max_seq_length=settings.get("max_length"))  # control: none
    frozen = freeze_word_embeddings(model) if settings.get(FREEZE_KEY) else {"word_embeddings_frozen": 0}
    rng = np.random.default_rng(run.seed)
    autocast, scaler, precision = mixed_precision(device)
    history = _History(model, evaluate)
    keeper = _Keeper(run, run_fingerprint(run, device=device, eval_every=eval_every, save_max_length=save_length))
    keeper.job_started = job_started
    started = time.perf_counter()  # a fresh job's training time counts from here, step 0's scoring taken out
    saved = keeper.load(progress.log)
    if saved is None:  # step 0: the base model, before a phase changes it (COB's and triplet's head)
        history.score(0, None, method)
    phases = module.phases(model=model, data=run.data, settings=settings, rng=rng, device=device)
    if saved is None:
        history.rows[0]["phase"] = phases[0].name if phases else method
    loop = _Loop(model, phases, rng, history, progress, (device, autocast, scaler), eval_every, keeper)
    if saved is None:  # history.evaluating holds step 0's scoring, which ran before the loop: count from before it
        loop.started = started
    step = loop.run(saved)
    if evaluate is not None and phases and not step:  # no update (a control): its model, with its head, as step 1
        history.score(1, None, phases[-1].name)
    seconds = time.perf_counter() - loop.started - history.evaluating
    _save(model, output_dir, save_length)
    resume.remove(run.resume_path)  # ended: nothing to resume
    return {
        "method": method,
        "steps": step,
        "steps_kept": kept_steps(phases, step),
        "parameters": {**parameter_counts(model), **frozen},
        "seconds": round(seconds, 3),
        "earlier_seconds": round(keeper.earlier, 3),
        "processes": keeper.processes,
        "device": device,
        "precision": precision,
        "history": _dedupe(history.rows),
        "settings": settings,
        "phases": {p.name: p.info for p in phases},
    }


def kept_steps(phases: list[Phase], steps: int) -> int:
    """The optimizer steps behind the model a run ends with: ``steps``, less those of the epochs after the one its
    model selection kept (``selected_epoch`` of ``steps_at_epoch``: the run's steps at the phase's start and after
    each of its epochs, recorded by the loop where the phase selects)."""
    kept = int(steps)
    for phase in phases:
        at, chosen = phase.info.get("steps_at_epoch"), phase.info.get("selected_epoch")
        if at and chosen is not None:
            kept -= at[-1] - at[chosen]
    return kept


def run_fingerprint(run: TrainingRun, *, device: str, eval_every, save_max_length) -> str:
    """What a saved training state belongs to: everything that decides the run's result (its method, base model,
    training data, settings, seed, device, scoring steps, saved length and the caller's ``resume_key``), not
    ``resume_every``."""
    from dataclasses import asdict

    fields = {
        "method": run.method,
        "base_model": run.base_model_dir,
        "data": resume.fingerprint(asdict(run.data)),
        "settings": run.settings,
        "seed": run.seed,
        "device": device,
        "eval_every": eval_every,
        "save_max_length": save_max_length,
        "key": run.resume_key,
    }
    return resume.fingerprint(fields)


class _Keeper:
    """Where a run keeps its training state (:attr:`TrainingRun.resume_path`): saved every ``resume_every``
    optimizer steps (:mod:`tecb.adapt.resume`), loaded when a killed run starts again."""

    def __init__(self, run: TrainingRun, fingerprint: str) -> None:
        self.path, self.every, self.fingerprint = run.resume_path, run.resume_every, fingerprint
        # the job's wall time: this process's from job_started, the earlier processes' as their last save had it
        self.job_started, self.earlier, self.processes = time.perf_counter(), 0.0, 1

    def due(self, step: int) -> bool:
        return self.path is not None and step % int(self.every) == 0

    def save(self, state: dict) -> None:
        job = {"seconds": self.earlier + time.perf_counter() - self.job_started, "processes": self.processes}
        resume.save(self.path, self.fingerprint, {**state, "job": job})

    def load(self, log) -> dict | None:
        saved = resume.load(self.path, self.fingerprint, log or (lambda line: None))
        if saved is not None and "job" in saved:
            self.earlier, self.processes = float(saved["job"]["seconds"]), int(saved["job"]["processes"]) + 1
        if saved is not None and log:
            at = saved["position"]
            log(
                f"resumed from {self.path}: phase {at['phase'] + 1}, epoch {at['epoch'] + 1}, batch {at['batch']}, "
                f"{at['step']} optimizer steps done"
            )
        return saved


def _capture(thing):
    """The state of something a method keeps beside its weights (:attr:`Phase.state`)."""
    import copy

    if isinstance(thing, np.random.Generator):
        return thing.bit_generator.state
    if isinstance(thing, dict):
        return copy.deepcopy(thing)
    return thing.state_dict()


def _put_back(thing, saved) -> None:
    """``thing`` back in the state :func:`_capture` took (in place: the method's closures hold it)."""
    if isinstance(thing, np.random.Generator):
        thing.bit_generator.state = saved
    elif isinstance(thing, dict):
        thing.clear()
        thing.update(saved)
    else:
        thing.load_state_dict(saved)


class _Loop:
    """The phases' optimisation: for each phase its optimizer, epochs of batches, model selection and the end-of-phase
    score; the training state saved every ``resume_every`` optimizer steps (:class:`_Keeper`) and, from a saved state,
    continued where it stopped. ``on``: ``(device, autocast, grad scaler)``."""

    def __init__(self, model, phases, rng, history, progress, on, eval_every, keeper: _Keeper) -> None:
        self.model, self.phases, self.rng, self.history, self.progress = model, phases, rng, history, progress
        self.device, self.autocast, self.scaler = on
        self.eval_every, self.keeper = eval_every, keeper
        self.step, self.last_loss, self.started = 0, None, time.perf_counter()

    def run(self, saved: dict | None) -> int:
        """Run every phase (from ``saved``'s position, if given); return the optimizer steps made."""
        first = saved["position"]["phase"] if saved else 0
        for index in range(first, len(self.phases)):
            phase = self.phases[index]
            params, optimizer, scheduler, epochs = _start_phase(phase, self.model, self.rng, self.device, self.progress)
            if saved is not None and index == first:  # the weights, the generators, ... as they were saved
                epochs, at, selection = self._restore(saved, optimizer, scheduler)
            else:
                at, selection = (0, 0), _Selection(phase, self.model)
            self._phase(index, epochs, at, (params, optimizer, scheduler, selection))
            selection.finish(log=self.progress.log)
            if self.history.evaluate is not None and "score" not in self.history.rows[-1]:  # every phase's end
                self.history.score(self.step, self.last_loss, phase.name)
        return self.step

    def _phase(self, index: int, epochs: list, at: tuple[int, int], tools: tuple) -> None:
        """The phase's epochs from ``at`` (epoch, batch), each followed by its model selection step."""
        phase, selection = self.phases[index], tools[3]
        if phase.validate and at == (0, 0):  # the steps behind each epoch's model (kept_steps)
            phase.info["steps_at_epoch"] = [self.step]
        for e in range(at[0], len(epochs)):
            for b in range(at[1] if e == at[0] else 0, len(epochs[e])):
                if self._batch(phase, epochs[e][b], tools) and self.keeper.due(self.step):
                    self.keeper.save(self._state(index, (e, b + 1), epochs, tools))
            if phase.validate:
                phase.info["steps_at_epoch"].append(self.step)
            selection.after_epoch()

    def _batch(self, phase: Phase, batch, tools: tuple) -> bool:
        """One batch of ``phase``: its loss, an optimizer step and its history row; False where the batch has nothing
        to learn from (no step)."""
        params, optimizer, scheduler, _ = tools
        with self.autocast():
            loss = phase.loss(batch)
        if loss is None:  # nothing to learn from this batch (e.g. a triplet-free instance)
            self.progress.step(None)
            return False
        if "step0_loss" not in phase.info:
            _record_step0(phase, batch, float(loss.detach()), self.progress.log)
        _optimizer_step(loss, params, optimizer, scheduler, self.scaler, phase.max_grad_norm)
        self.step += 1
        self.last_loss = float(loss.detach())
        self.progress.step(self.last_loss)
        if self.eval_every and self.step % int(self.eval_every) == 0:
            self.history.score(self.step, self.last_loss, phase.name)
        else:
            self.history.rows.append({"step": self.step, "phase": phase.name, "loss": self.last_loss})
        return True

    def _state(self, index: int, at: tuple[int, int], epochs: list, tools: tuple) -> dict:
        """Everything a killed run needs to continue after this step (:func:`tecb.adapt.resume.save`)."""
        _, optimizer, scheduler, selection = tools
        evaluate = self.history.evaluate
        return {
            "position": {"phase": index, "epoch": at[0], "batch": at[1], "step": self.step, "epochs": epochs},
            "last_loss": self.last_loss,
            "elapsed": time.perf_counter() - self.started,
            "history": {"rows": self.history.rows, "evaluating": self.history.evaluating},
            "evaluate": evaluate.state_dict() if hasattr(evaluate, "state_dict") else None,
            "model": self.model.state_dict(),
            "phases": [
                {
                    "info": p.info,
                    "modules": [m.state_dict() for m in p.modules],
                    "state": [_capture(x) for x in p.state],
                }
                for p in self.phases
            ],
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler else None,
            "selection": selection.state_dict(),
            "random": resume.random_states([self.rng]),
        }

    def _restore(self, saved: dict, optimizer, scheduler) -> tuple[list, tuple[int, int], _Selection]:
        """The run as ``saved`` left it; returns the phase's epochs of batches, the position in them and the phase's
        model selection."""
        at = saved["position"]
        self.step, self.last_loss = at["step"], saved["last_loss"]
        self.started = time.perf_counter() - saved["elapsed"]
        self.history.rows[:] = saved["history"]["rows"]
        self.history.evaluating = saved["history"]["evaluating"]
        if saved["evaluate"] is not None and hasattr(self.history.evaluate, "load_state_dict"):
            self.history.evaluate.load_state_dict(saved["evaluate"])
        self.model.load_state_dict(saved["model"])
        for phase, kept in zip(self.phases, saved["phases"], strict=True):
            _put_back(phase.info, kept["info"])
            for module, state in zip(phase.modules, kept["modules"], strict=True):
                module.load_state_dict(state)
            for thing, state in zip(phase.state, kept["state"], strict=True):
                _put_back(thing, state)
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        if self.scaler is not None and saved["scaler"] is not None:
            self.scaler.load_state_dict(saved["scaler"])
        selection = _Selection(self.phases[at["phase"]], self.model, saved=saved["selection"])
        self.progress.done = sum(len(b) for b in at["epochs"][: at["epoch"]]) + at["batch"]
        resume.restore_random_states(saved["random"], [self.rng])  # last: nothing above draws after it
        return at["epochs"], (at["epoch"], at["batch"]), selection


#: a step-0 loss below this share of the loss at chance leaves the method ~no signal to learn from
NO_SIGNAL_SHARE = 0.01


def _record_step0(phase: Phase, batch, loss: float, log) -> None:
    """The phase's first loss (before any update) beside its loss at chance, in ``phase.info`` and the log; a loss
    under :data:`NO_SIGNAL_SHARE` of chance is flagged: the method has ~nothing left to learn on these data."""
    phase.info["step0_loss"] = round(loss, 6)
    chance = float(phase.chance_loss(batch)) if phase.chance_loss else None
    phase.info["chance_loss"] = None if chance is None else round(chance, 6)
    flag = chance is not None and chance > 0 and loss < NO_SIGNAL_SHARE * chance
    phase.info["no_signal"] = bool(flag)
    if log:
        versus = f", at chance {chance:.4f}" if chance is not None else " (no loss at chance for this method)"
        log(f"phase {phase.name}: loss at step 0 {loss:.4g}{versus}" + ("; ~no signal to learn" if flag else ""))


class _History:
    """The training's history rows; a scored row calls ``evaluate`` on the model in eval mode, the time it takes
    (``evaluating``) kept apart from the training's."""

    def __init__(self, model, evaluate: Callable | None) -> None:
        self.model, self.evaluate = model, evaluate
        self.rows: list[dict] = []
        self.evaluating = 0.0

    def score(self, step: int, loss, phase_name: str) -> None:
        import torch

        row = {"step": step, "phase": phase_name, "loss": loss}
        if self.evaluate is not None:
            t0 = time.perf_counter()
            self.model.eval()
            with torch.no_grad():
                row["score"] = float(self.evaluate(self.model))
            self.model.train()
            self.evaluating += time.perf_counter() - t0
        self.rows.append(row)


def _start_phase(phase: Phase, model, rng, device, progress: Progress):
    """A phase's parameters, optimizer, learning-rate schedule and epochs of batches (:func:`epochs_for`, recorded in
    ``phase.info``); the model and the phase's modules put in training mode, the phase's first progress line."""
    from transformers import get_linear_schedule_with_warmup

    params, optimizer = _optimizer(phase, model, device)
    epochs = epochs_for(phase, rng)
    total = sum(len(b) for b in epochs)
    phase.info.update(epochs_run=len(epochs), steps_run=total)

    scheduler = get_linear_schedule_with_warmup(optimizer, int(math.ceil(phase.warmup_ratio * total)), max(total, 1))
    model.train()
    for extra in phase.modules:
        extra.train()
    progress.start(phase.name, total, f"{int(phase.epochs)} epochs of {len(epochs[0]) if epochs else 0} batches")
    return params, optimizer, scheduler, epochs


def _optimizer(phase: Phase, model, device):
    """A phase's trained parameters (the encoder's where it trains the encoder, its extra modules', moved to
    ``device``) and their AdamW optimizer (no weight decay on biases and norms)."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad] if phase.train_encoder else []
    for extra in phase.modules:
        extra.to(device)
        params += [p for p in extra.parameters() if p.requires_grad]
    if phase.head_lr is None:  # one learning rate (the groups as they always were)
        groups = _decay_groups(params, phase.weight_decay, phase.lr)
    else:  # the added heads (in the model or beside it) at their own rate
        head_ids = {id(p) for m in list(phase.heads) + list(phase.modules) for p in m.parameters()}
        encoder = [p for p in params if id(p) not in head_ids]
        heads = [p for p in params if id(p) in head_ids]
        groups = _decay_groups(encoder, phase.weight_decay, phase.lr) + _decay_groups(
            heads, phase.weight_decay, phase.head_lr
        )
        groups = [g for g in groups if g["params"]]
    optimizer = torch.optim.AdamW(groups, lr=phase.lr)
    return params, optimizer


def _decay_groups(params: list, weight_decay: float, lr: float) -> list[dict]:
    """AdamW's parameter groups of ``params`` at ``lr``: weight decay on matrices, none on biases and norms."""
    return [
        {"params": [p for p in params if p.ndim > 1], "weight_decay": weight_decay, "lr": lr},
        {"params": [p for p in params if p.ndim <= 1], "weight_decay": 0.0, "lr": lr},
    ]


def _optimizer_step(loss, params, optimizer, scheduler, scaler, max_grad_norm) -> None:
    """One optimizer step on ``loss`` (scaled where ``scaler``: mixed precision on a GPU), gradients clipped to
    ``max_grad_norm`` (0 or None: not clipped)."""
    import torch

    (scaler.scale(loss) if scaler else loss).backward()
    if scaler:
        scaler.unscale_(optimizer)
    if max_grad_norm:
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    if scaler:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)


def _save(model, output_dir, save_length) -> None:
    """The adapted model, in eval mode, at ``save_length`` (None: the training length), written atomically."""
    model.eval()
    if save_length:
        model.max_seq_length = int(save_length)
    with io.atomic_dir(output_dir) as tmp:
        model.save(str(tmp))


class _Selection:
    """A phase's model selection (:attr:`Phase.validate`): the validation score before the first epoch (reported,
    never selected: the base model with an untrained head) and after each; at the end the weights of the best
    epoch are put back. Records ``validation`` (the scores) and ``selected_epoch`` in the phase's info."""

    def __init__(self, phase: Phase, model, *, saved: dict | None = None):
        """``saved``: the :meth:`state_dict` of a killed run's selection, continued (nothing validated here)."""
        self.phase, self.model = phase, model
        self.best: tuple[float, int, dict] | None = None
        if saved is not None:
            self.scores, self.best = list(saved["scores"]), saved["best"]
        else:
            self.scores = [float(phase.validate())] if phase.validate else []

    def state_dict(self) -> dict:
        """The validation scores so far and the best epoch's score, index and weights."""
        return {"scores": self.scores, "best": self.best}

    def after_epoch(self) -> None:
        if not self.phase.validate:
            return
        score = float(self.phase.validate())
        self.scores.append(score)
        if self.best is None or score > self.best[0]:
            state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            self.best = (score, len(self.scores) - 1, state)

    def finish(self, log=None) -> None:
        if not self.phase.validate:
            return
        self.phase.info.update(validation=[round(v, 6) for v in self.scores])
        if self.best is None:
            self.phase.info["selected_epoch"] = None
            return
        score, epoch, state = self.best
        self.phase.info["selected_epoch"] = epoch
        if epoch != len(self.scores) - 1:
            self.model.load_state_dict(state)
        if log:
            shown = ", ".join(f"{v:.4f}" for v in self.scores)
            log(f"phase {self.phase.name}: validation V-measure by epoch [{shown}] -> epoch {epoch} kept")


def _dedupe(history: list[dict]) -> list[dict]:
    """One row per step: a scored row replaces the loss-only row of the same step."""
    rows: dict[int, dict] = {}
    for row in history:
        rows[row["step"]] = {**rows.get(row["step"], {}), **row}
    return [rows[s] for s in sorted(rows)]
