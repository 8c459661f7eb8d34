"""Adaptive pre-training: continue pre-training a checkpoint on a dataset's texts (paper §5, Table 5, Figure 2).

Two methods, both plain, seeded torch loops:

- ``wwm``: masked language modelling with whole-word masking (:class:`WholeWordMaskCollator`);
- ``tsdae``: the denoising auto-encoder of sentence-transformers (``DenoisingAutoEncoderLoss``, decoder
  tied to the encoder) on texts damaged by :func:`delete_words`.

At every scheduled epoch the current weights are saved as a Hugging Face checkpoint (with the base's
sentence-transformers files, when it has them: its pooling, normalisation and default prompt, which training
puts in front of every text too) and scored exactly as the benchmark scores the base: loaded by :func:`tecb.embed.encode.load_sentence_transformer`
(mean pooling over the last hidden states with the attention mask), encoded by
:func:`tecb.embed.encode.encode_transformer`, clustered and scored split by split by :func:`tecb.cluster.algorithms.score_splits`.
Training on the texts that are then clustered is the paper's transductive setting.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tecb import io
from tecb.adapt import resume
from tecb.adapt.runtime import mixed_precision, resolve_device, seeded_global_rngs
from tecb.embed.encode import Progress, encode_transformer, library_versions, load_sentence_transformer, read_texts

METHODS = ("wwm", "tsdae")


@dataclass(frozen=True)
class Scoring:
    """How a checkpoint is scored (pre-training's and every adaptation job's steps), as the benchmark scores a
    model: ``algorithm`` (k-means on raw vectors) with the config's ``seed`` (also ``disjoint``'s category split),
    encoded ``batch_size`` texts at a time at ``max_length`` tokens (None: the benchmark's), also every ``every``
    optimizer steps (None: step 0 and the end of each phase only)."""

    algorithm: dict
    seed: int
    batch_size: int
    max_length: int | None = None
    every: int | None = None


# --- a sentence-transformers base: its modules and prompt --------------------------------------

#: what makes a folder a sentence-transformers model beside its weights (pooling, normalisation, prompts):
#: copied from the base into every checkpoint, so a checkpoint is scored as the embed stage scores the base
SENTENCE_TRANSFORMERS_FILES = (
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling",
    "2_Normalize",
)


def base_prompt(model_dir) -> str:
    """The prompt sentence-transformers prepends to the base's texts by default (its ``default_prompt_name``), or
    ``""``: training sees the texts as the base and its checkpoints encode them (multilingual-e5's ``query: ``)."""
    import json

    config = Path(model_dir) / "config_sentence_transformers.json"
    if not config.exists():
        return ""
    settings = json.loads(config.read_text(encoding="utf-8"))
    name = settings.get("default_prompt_name")
    return (settings.get("prompts") or {}).get(name, "") if name else ""


def copy_sentence_transformers_files(model_dir, folder) -> None:
    """The base's :data:`SENTENCE_TRANSFORMERS_FILES` that exist, copied into the checkpoint ``folder``."""
    import shutil

    for name in SENTENCE_TRANSFORMERS_FILES:
        source = Path(model_dir) / name
        if source.is_dir():
            shutil.copytree(source, Path(folder) / name)
        elif source.exists():
            shutil.copy2(source, Path(folder) / name)


# --- whole-word masking -------------------------------------------------------------------


class WholeWordMaskCollator:
    """Tokenise texts and mask whole words for MLM, like ``DataCollatorForWholeWordMask``.

    Words are the fast tokenizer's pre-tokenised words (``word_ids``), so every WordPiece ``##``
    continuation belongs to its word. Per text, words are drawn in random order until
    ``round(probability * n_tokens)`` tokens (at least one) are chosen; a chosen token becomes
    ``[MASK]`` (80 %), a random token (10 %) or stays (10 %). Labels are -100 except at chosen tokens.
    """

    def __init__(self, tokenizer, probability: float = 0.15, max_length: int = 512, *, seed: int):
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError("whole-word masking needs a fast tokenizer (word_ids)")
        self.tokenizer = tokenizer
        self.probability = probability
        self.max_length = max_length
        self.rng = np.random.default_rng(seed)

    def choose_words(self, word_ids: list) -> np.ndarray:
        """Return a boolean mask over tokens: the tokens of the words drawn for masking."""
        words: dict[int, list[int]] = {}
        for pos, wid in enumerate(word_ids):
            if wid is not None:
                words.setdefault(wid, []).append(pos)
        chosen = np.zeros(len(word_ids), dtype=bool)
        n_tokens = sum(len(v) for v in words.values())
        if not n_tokens:
            return chosen
        budget = max(1, int(round(n_tokens * self.probability)))
        covered = 0
        for wid in self.rng.permutation(list(words)):
            positions = words[int(wid)]
            if covered >= budget:
                break
            if covered + len(positions) > budget:
                continue
            chosen[positions] = True
            covered += len(positions)
        return chosen

    def __call__(self, texts: list[str]) -> dict:
        import torch

        enc = self.tokenizer(texts, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
        input_ids = enc["input_ids"].clone()
        labels = torch.full_like(input_ids, -100)
        ordinary = np.setdiff1d(np.arange(len(self.tokenizer)), self.tokenizer.all_special_ids)
        for row in range(input_ids.shape[0]):
            chosen = self.choose_words(enc.word_ids(row))
            for pos in np.flatnonzero(chosen):
                labels[row, pos] = input_ids[row, pos]
                draw = self.rng.random()
                if draw < 0.8:
                    input_ids[row, pos] = self.tokenizer.mask_token_id
                elif draw < 0.9 and len(ordinary):
                    input_ids[row, pos] = int(self.rng.choice(ordinary))
        return {
            "input_ids": input_ids,
            "attention_mask": enc["attention_mask"],
            "labels": labels,
            **({"token_type_ids": enc["token_type_ids"]} if "token_type_ids" in enc else {}),
        }


def masked_lm_loss(model, batch: dict):
    """``model(**batch).loss`` of a masked language model, with a BERT-family prediction head (``model.cls``)
    applied to the labelled positions only: the same mean cross-entropy over the masked tokens, without the logits
    of every position over the whole vocabulary (e5's 250,037 pieces: 8 GB of logits for 32 texts x 256 tokens,
    most of a CPU step). Other architectures take their own forward pass."""
    import torch.nn.functional as F

    head = getattr(model, "cls", None)
    if head is None:
        return model(**batch).loss
    labels = batch["labels"]
    hidden = model.base_model(**{k: v for k, v in batch.items() if k != "labels"}).last_hidden_state
    chosen = labels != -100
    return F.cross_entropy(head(hidden[chosen]).float(), labels[chosen])


# --- TSDAE noise --------------------------------------------------------------------------


def delete_words(text: str, ratio: float, rng: np.random.Generator) -> str:
    """TSDAE's deletion noise: drop each whitespace-separated word with probability ``ratio``, keep at least one."""
    words = text.split()
    if not words:
        return text
    keep = rng.random(len(words)) >= ratio
    if not keep.any():
        keep[int(rng.integers(len(words)))] = True
    return " ".join(w for w, k in zip(words, keep) if k)


# --- evaluation ---------------------------------------------------------------------------


def encode_checkpoint(path, texts: list[str], device=None, batch_size: int = 32, max_seq_length: int | None = None):
    """The embed stage's vectors of ``texts`` for a plain checkpoint (mean pooling with the attention mask)."""
    model = load_sentence_transformer(str(path), device=device, max_seq_length=max_seq_length)
    return np.concatenate([v for _, v in encode_transformer(model, texts, batch_size)])


def evaluate_checkpoint(
    path, texts: list[str], splits, *, scoring: Scoring, device=None, log=print, predictions: list | None = None
) -> list[dict]:
    """Score a plain checkpoint on a dataset exactly as the embed + cluster stages do (mean pooling, raw vectors),
    as ``scoring`` says (:class:`Scoring`: algorithm, seed, batch size, sequence length; its
    ``every`` is not read). ``predictions`` (a list, when given) gets the predicted clusters as the cluster
    stage's labels file (:func:`tecb.cluster.algorithms.labels_table`; every state at ``restarts`` > 1)."""
    from tecb.cluster.algorithms import cluster_splits, labels_table

    vectors = encode_checkpoint(path, texts, device, scoring.batch_size, scoring.max_length)
    splits = list(splits)
    points = ((s, vectors[ids], labels) for s, ids, labels in splits)
    rows, _, predicted = cluster_splits(points, scoring.algorithm, seed=scoring.seed, log=log)
    if predictions is not None:
        predictions.append(labels_table(predicted, {s: ids for s, ids, _ in splits}))
    return rows


# --- training -----------------------------------------------------------------------------


def _batches(n: int, batch_size: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def _build(method: str, model_dir, params: dict, device: str):
    """Return ``(trainable module, step(texts, rng) -> loss, save(dir), generators)`` for a method, ``generators``
    the method's own random generators (whose states a resumed job restores). Texts are trained with
    the base's default prompt in front (:func:`base_prompt`); ``save`` writes the weights and tokenizer only
    (:meth:`_Training.save` adds the base's sentence-transformers files)."""
    prompt = base_prompt(model_dir)
    if method == "wwm":
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForMaskedLM.from_pretrained(model_dir).to(device)
        collator = WholeWordMaskCollator(
            tokenizer, params["mlm_probability"], params["max_length"], seed=params["seed"]
        )

        def step(texts, rng):
            batch = {k: v.to(device) for k, v in collator([prompt + t for t in texts]).items()}
            return masked_lm_loss(model, batch)

        def save(out):
            model.save_pretrained(out)
            tokenizer.save_pretrained(out)

        return model, step, save, [collator.rng]
    if method == "tsdae":
        from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

        encoder = load_sentence_transformer(str(model_dir), device=device, max_seq_length=params["max_length"])
        loss_fn = DenoisingAutoEncoderLoss(encoder, tie_encoder_decoder=True).to(device)

        def step(texts, rng):
            noisy = [prompt + delete_words(t, params["deletion_ratio"], rng) for t in texts]
            prepare = getattr(encoder, "preprocess", None) or encoder.tokenize
            features = [
                {k: v.to(device) if hasattr(v, "to") else v for k, v in prepare(x).items()}
                for x in (noisy, [prompt + t for t in texts])
            ]
            return loss_fn(features, None)

        def save(out):
            encoder.transformers_model.save_pretrained(out)
            encoder.tokenizer.save_pretrained(out)

        return loss_fn, step, save, []
    raise ValueError(f"unknown pre-training method {method!r}; known: {', '.join(METHODS)}")


@dataclass(frozen=True)
class PretrainJob:
    """One pre-training job (:func:`pretrain`): continue pre-training ``model_dir`` with ``method`` on the unique
    texts of ``texts_path``, score it on the splits of ``splits_path`` after each of ``eval_epochs``.

    ``seed`` seeds the training (one job per seed); ``eval_seed`` the clustering of each evaluation (the
    benchmark's config seed, so that epoch 0 would score like the benchmark's own k-means). ``params``: lr,
    batch_size, grad_accum, weight_decay, warmup_ratio, max_length and the method's own (mlm_probability /
    deletion_ratio). A progress line (texts done / total in the epoch, rate, ETA of the epoch) is logged at most
    every ``progress_every`` seconds.

    ``resume_path``: where the job keeps its training state (weights, optimizer, schedule, every random
    generator, the epoch's batch order and position) every ``resume_every`` optimizer steps; a job started again
    after being killed continues from it and ends with the same bytes as one that ran through (None: no state
    kept). The file is removed when the job ends.

    ``train_texts_path``: texts to train on instead of ``texts_path``'s (None: the evaluated texts themselves,
    transductively, as the paper); e.g. unlabelled books the benchmark never evaluates
    (:func:`tecb.data.datasets.unlabelled_blurb_texts`). The evaluation always encodes ``texts_path``'s."""

    model_dir: str | Path
    texts_path: str | Path
    splits_path: str | Path
    method: str
    params: dict
    eval_epochs: list[int]
    algorithm: dict
    checkpoint_dir: str | Path
    seed: int
    eval_seed: int
    device: str | None = None
    eval_batch_size: int = 32
    progress_every: float = 60.0
    resume_path: str | Path | None = None
    resume_every: int = 50
    train_texts_path: str | Path | None = None

    @classmethod
    def from_job(cls, job) -> PretrainJob:
        """The job of a pretrain rule's ``job`` (the ``snakemake`` object of its script): its inputs ``model``,
        ``texts``, ``splits`` and ``train_texts`` (empty: the dataset's own texts), its output ``checkpoint``
        with the training state beside it (``.resume.pt``), its wildcards ``method`` and ``seed`` and its params
        ``method_params``, ``epochs``, ``algorithm``, ``eval_seed``, ``device``, ``eval_batch_size`` and
        ``resume_every``."""
        return cls(
            model_dir=job.input.model,
            texts_path=job.input.texts,
            splits_path=job.input.splits,
            checkpoint_dir=job.output.checkpoint,
            method=job.wildcards.method,
            params=job.params.method_params,
            eval_epochs=job.params.epochs,
            algorithm=job.params.algorithm,
            seed=int(job.wildcards.seed),
            eval_seed=job.params.eval_seed,
            device=job.params.device,
            eval_batch_size=job.params.eval_batch_size,
            # beside the checkpoint folder, not an output: a killed job started again continues from it
            resume_path=job.output.checkpoint + ".resume.pt",
            resume_every=job.params.resume_every,
            train_texts_path=job.input.train_texts or None,  # none: the dataset's own texts
        )


def pretrain(
    job: PretrainJob, *, log=print, timings: list | None = None, clock: dict | None = None, labels: list | None = None
) -> list[dict]:
    """Run ``job``: train, score after each of its ``eval_epochs``; return one row per (epoch, split).

    Writes the last checkpoint with ``provenance.json`` to ``job.checkpoint_dir`` (atomically). Durations stay
    out of the rows (the scores are identical across reruns): one entry per evaluated epoch (``epoch``,
    ``train_seconds`` of training since the start, ``eval_seconds`` of this evaluation) is appended to
    ``timings`` when given. An evaluated epoch before the last is saved to a scratch folder beside
    ``checkpoint_dir`` (:func:`tecb.io.scratch_dir`, named like every temporary, so a killed job's is cleaned
    up), removed after its scoring. ``clock`` (a dict, when given) gets the job's earlier processes: ``earlier``,
    their wall time up to their last saved state (0 for a fresh job), and ``processes``, this one included; and at
    the end ``step0_loss`` (the first batch's loss, before any update) and ``chance_loss`` (uniform predictions).
    ``labels`` (a list, when given) gets each evaluated epoch's predictions (:func:`labels_of_epoch`), a resumed
    job's earlier ones first.
    """
    with seeded_global_rngs(job.seed):
        return _train(job, log, timings, clock if clock is not None else {}, labels)


class _Training:
    """A method's trainable module with its optimizer: AdamW (weight decay on matrices only), a constant
    learning rate after a linear warm-up, gradient accumulation, bf16/fp16 autocast on CUDA (with a grad scaler
    for fp16); counts the optimizer steps."""

    def __init__(self, method: str, model_dir, params: dict, device: str, n_texts: int, epochs: int):
        import torch
        from transformers import get_constant_schedule_with_warmup

        self.params, self.device, self.model_dir, self.n_texts = params, device, model_dir, n_texts
        self.module, self.loss, self._save, self.generators = _build(method, model_dir, params, device)
        if params.get("freeze_word_embeddings"):
            freeze_word_embeddings(self.module)
        trainable = [p for p in self.module.parameters() if p.requires_grad]
        decay = [p for p in trainable if p.ndim > 1]
        no_decay = [p for p in trainable if p.ndim <= 1]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": params["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
            lr=params["lr"],
        )
        self.batch_size, self.accum = int(params["batch_size"]), int(params["grad_accum"])
        self.steps_per_epoch = math.ceil(math.ceil(n_texts / self.batch_size) / self.accum)
        self.max_steps = params.get("max_steps")  # None: every epoch whole
        planned = self.steps_per_epoch * epochs
        self.warmup = int(round(params["warmup_ratio"] * min(planned, self.max_steps or planned)))
        self.scheduler = get_constant_schedule_with_warmup(self.optimizer, self.warmup)
        self.autocast, self.scaler, self.amp_dtype = mixed_precision(device)
        self.steps = 0
        # the first batch's loss before any update, beside the loss of uniform predictions over the vocabulary (the
        # MLM head's and TSDAE's decoder's: both predict tokens): how much the untrained heads leave to learn
        self.step0 = {"step0_loss": None, "chance_loss": round(math.log(vocabulary_size(self.module)), 6)}

    @property
    def exhausted(self) -> bool:
        """Whether the job's ``max_steps`` optimizer steps are done."""
        return self.max_steps is not None and self.steps >= self.max_steps

    def _optimizer_step(self) -> None:
        if self.scaler is None:
            self.optimizer.step()
        else:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.steps += 1

    def epoch(self, texts: list[str], rng, label: str, progress_every: float, log, *, resume=None, on_step=None):
        """One pass over ``texts`` in a random order; return the mean loss of its batches. ``resume`` (a saved
        position: ``order``, ``next_batch``, ``losses``) continues an epoch; ``on_step(next_batch, order, losses)``
        is called after each optimizer step."""
        self.module.train()
        if resume is None:
            order, losses, first = [b.tolist() for b in _batches(len(texts), self.batch_size, rng)], [], 0
        else:
            order, losses, first = resume["order"], list(resume["losses"]), resume["next_batch"]
        micro = 0
        self.optimizer.zero_grad(set_to_none=True)
        progress, last = Progress(len(texts), log, what=label, heartbeat=0), time.perf_counter()
        done = sum(len(b) for b in order[:first])
        for i in range(first, len(order)):
            idx = order[i]
            with self.autocast():
                loss = self.loss([texts[j] for j in idx], rng) / self.accum
            (self.scaler.scale(loss) if self.scaler else loss).backward()
            losses.append(float(loss.detach()) * self.accum)
            if self.step0["step0_loss"] is None:
                self.step0["step0_loss"] = round(losses[-1], 6)
                log(
                    f"loss at step 0 {losses[-1]:.4g}, at chance (uniform over the vocabulary) {self.step0['chance_loss']:.4g}"
                )
            micro += 1
            if micro == self.accum or i == len(order) - 1:
                self._optimizer_step()
                micro = 0
                if on_step is not None:
                    on_step(i + 1, order, losses)
                if self.exhausted:
                    break
            done += len(idx)
            if time.perf_counter() - last >= progress_every and done < len(texts):
                progress.update(done)
                last = time.perf_counter()
        return float(np.mean(losses))

    def save(self, out) -> None:
        """The checkpoint: the method's weights and tokenizer, and the base's sentence-transformers files
        (:func:`copy_sentence_transformers_files`), so that it is scored as the base is."""
        self._save(out)
        copy_sentence_transformers_files(self.model_dir, out)

    def state(self) -> dict:
        """Weights, optimizer, schedule, grad scaler and every random generator (:func:`tecb.adapt.resume.random_states`),
        for :func:`tecb.adapt.resume.save`."""
        return {
            "module": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler else None,
            "steps": self.steps,
            "step0": dict(self.step0),
            **resume.random_states(self.generators),  # python, numpy, torch, cuda, generators
        }

    def restore(self, state: dict) -> None:
        self.module.load_state_dict(state["module"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler is not None and state["scaler"] is not None:
            self.scaler.load_state_dict(state["scaler"])
        self.steps = state["steps"]
        self.step0.update(state.get("step0", {}))
        resume.restore_random_states(state, self.generators)


# --- resuming a killed job ------------------------------------------------------------------


def job_fingerprint(job: PretrainJob) -> str:
    """What a saved training state belongs to: the job's settings and its texts' bytes."""
    return resume.fingerprint(
        {
            "model_dir": str(job.model_dir),
            "texts": io.file_sha256(job.texts_path),
            **({"train_texts": io.file_sha256(job.train_texts_path)} if job.train_texts_path else {}),
            "method": job.method,
            "params": job.params,
            "eval_epochs": sorted(job.eval_epochs),
            "algorithm": job.algorithm,
            "seed": job.seed,
            "eval_seed": job.eval_seed,
        }
    )


def vocabulary_size(module) -> int:
    """The number of tokens the method's prediction head chooses among: the MLM model's or TSDAE's decoder's."""
    for candidate in (module, getattr(module, "decoder", None)):
        config = getattr(candidate, "config", None)
        if config is not None and getattr(config, "vocab_size", None):
            return int(config.vocab_size)
    raise ValueError(f"no vocabulary size on {type(module).__name__} (an MLM model or TSDAE's loss was expected)")


def freeze_word_embeddings(module) -> int:
    """Stop training every word-embedding matrix inside ``module`` (the encoder's, and the decoder's or MLM head's
    tied to it): on multilingual-e5-small they are 96 M of the 118 M parameters, so their gradients and AdamW
    moments are most of a step's cost. Returns how many matrices were frozen."""
    frozen = 0
    for name, parameter in module.named_parameters():
        if name.endswith("word_embeddings.weight"):
            parameter.requires_grad_(False)
            frozen += 1
    return frozen


def _eval_epochs(eval_epochs) -> list[int]:
    """The scheduled epochs, sorted and without repeats; a ValueError unless all are positive."""
    epochs = sorted({int(e) for e in eval_epochs})
    if not epochs or epochs[0] < 1:
        raise ValueError(f"eval_epochs must be positive integers, got {epochs}")
    return epochs


def _train(job: PretrainJob, log, timings: list | None, clock: dict, labels: list | None = None) -> list[dict]:
    """The body of :func:`pretrain`, under its seeded global generators."""
    labels = labels if labels is not None else []
    process_started = time.perf_counter()
    eval_epochs, data, train, training = _prepare(job, log)
    rng = np.random.default_rng(job.seed)
    fingerprint = job_fingerprint(job) if job.resume_path else None
    rows, first_epoch, saved_at = _resume(job, fingerprint, training, rng, log)
    labels.extend((saved_at or {}).get("labels", []))
    earlier = (saved_at or {}).get("job", {"seconds": 0.0, "processes": 0})
    clock.update(earlier=float(earlier["seconds"]), processes=int(earlier["processes"]) + 1)
    started, evaluating = time.perf_counter(), 0.0
    for epoch in range(first_epoch, eval_epochs[-1] + 1):

        def on_step(next_batch, order, losses, epoch=epoch):
            if job.resume_path and training.steps % job.resume_every == 0 and next_batch < len(order):
                position = {"epoch": epoch, "next_batch": next_batch, "order": order, "losses": losses}
                position.update(rows=rows, labels=labels, rng=rng.bit_generator.state)
                wall = clock["earlier"] + time.perf_counter() - process_started  # every process's, so far
                position["job"] = {"seconds": wall, "processes": clock["processes"]}
                resume.save(job.resume_path, fingerprint, {"training": training.state(), "position": position})

        train_loss = training.epoch(
            train, rng, f"epoch {epoch}: ", job.progress_every, log, resume=saved_at, on_step=on_step
        )
        saved_at = None
        log(f"epoch {epoch}: mean loss {train_loss:.4f}, {training.steps} optimizer steps")
        if training.exhausted:
            log(f"epoch {epoch}: max_steps {training.max_steps} reached: the job ends, this epoch scored as its last")
        if epoch not in eval_epochs and not training.exhausted:
            continue
        eval_started = time.perf_counter()
        train_seconds = eval_started - started - evaluating  # training only, the evaluations left out
        last = epoch == eval_epochs[-1] or training.exhausted
        rows.extend(_evaluate(job, epoch, training, train_loss, last=last, data=(*data, labels), log=log))
        evaluating += time.perf_counter() - eval_started
        if timings is not None:
            eval_seconds = round(time.perf_counter() - eval_started, 3)
            timings.append({"epoch": epoch, "train_seconds": round(train_seconds, 3), "eval_seconds": eval_seconds})
        if training.exhausted:
            break
    resume.remove(job.resume_path)  # finished: nothing to resume
    clock.update(training.step0)
    return rows


def _prepare(job: PretrainJob, log) -> tuple[list[int], tuple, list[str], _Training]:
    """``(eval epochs, (texts, splits), training texts, training)`` of a job, its plan logged."""
    import pyarrow.parquet as pq

    if job.method not in METHODS:
        raise ValueError(f"unknown pre-training method {job.method!r}; known: {', '.join(METHODS)}")
    eval_epochs = _eval_epochs(job.eval_epochs)
    device = resolve_device(job.device)
    texts = read_texts(job.texts_path)
    train = read_texts(job.train_texts_path) if job.train_texts_path else texts
    splits = list(io.iter_splits(pq.read_table(job.splits_path)))
    training = _Training(
        job.method, job.model_dir, dict(job.params, seed=job.seed), device, len(train), eval_epochs[-1]
    )
    log(
        f"{job.method}: {len(train)} {'unlabelled ' if job.train_texts_path else ''}texts, batch "
        f"{training.batch_size} x {training.accum}, {training.steps_per_epoch} optimizer steps/epoch, "
        f"{eval_epochs[-1]} epochs, warmup {training.warmup} steps, device {device}, autocast {training.amp_dtype}"
    )
    return eval_epochs, (texts, splits), train, training


def _evaluate(job: PretrainJob, epoch: int, training: _Training, train_loss, *, last: bool, data: tuple, log):
    """Save the epoch's checkpoint (the last to ``job.checkpoint_dir``), score it on ``data`` (texts, splits, the
    list its predictions go to: :func:`labels_of_epoch`) and return its rows (with ``unlabelled_texts``, their
    number, when the job trained on other texts)."""
    texts, splits, labels = data
    predicted: list = []
    training.module.eval()
    meta = _provenance(job, epoch, training, training.params, training.device, len(texts))
    scored = _save_and_score(
        job.checkpoint_dir,
        training.save,
        meta,
        last=last,
        score=lambda folder: _score(folder, texts, splits, job, training.device, training.params, log, predicted),
    )
    labels.append(labels_of_epoch(epoch, predicted[-1]))
    log(f"epoch {epoch}: mean V-measure {float(np.mean([r['v_measure'] for r in scored])):.4f}")
    other = {"unlabelled_texts": training.n_texts} if job.train_texts_path else {}
    return [{"epoch": epoch, "optimizer_steps": training.steps, "train_loss": train_loss, **other, **r} for r in scored]


def _resume(job: PretrainJob, fingerprint, training: _Training, rng, log) -> tuple[list, int, dict | None]:
    """``(rows so far, first epoch, position in it)``: from the job's saved state when there is one for it (the
    training state and the job's generator restored), else a start from epoch 1."""
    saved = resume.load(job.resume_path, fingerprint, log)
    if saved is None:
        return [], 1, None
    training.restore(saved["training"])
    position = saved["position"]
    rng.bit_generator.state = position["rng"]
    log(
        f"resumed from {job.resume_path}: epoch {position['epoch']}, batch {position['next_batch']}, "
        f"{training.steps} optimizer steps done"
    )
    return position["rows"], position["epoch"], position


def _provenance(job: PretrainJob, epoch: int, training: _Training, params: dict, device: str, n_texts: int) -> dict:
    """The ``provenance.json`` of the checkpoint of ``epoch``."""
    return {
        "base_model": str(job.model_dir),
        "method": job.method,
        "epoch": epoch,
        "seed": job.seed,
        "optimizer_steps": training.steps,
        "params": params,
        "device": device,
        "autocast": training.amp_dtype,
        "texts": str(job.texts_path),
        "n_texts": n_texts,
        **({"train_texts": str(job.train_texts_path)} if job.train_texts_path else {}),
        "versions": library_versions(),
    }


def _save_and_score(checkpoint_dir, save, meta: dict, *, last: bool, score) -> list[dict]:
    """Save the epoch's checkpoint and return ``score(folder)``: the last epoch's to ``checkpoint_dir``
    (atomically), an earlier one's to a scratch folder beside it, removed after its scoring."""
    checkpoint_dir = Path(checkpoint_dir)
    folder = io.atomic_dir(checkpoint_dir) if last else io.scratch_dir(checkpoint_dir)
    with folder as tmp:
        _save_checkpoint(save, tmp, meta)
        if not last:
            return score(tmp)
    return score(checkpoint_dir)


def _save_checkpoint(save, folder, meta: dict) -> None:
    """A Hugging Face checkpoint (with the base's sentence-transformers files) and its ``provenance.json``."""
    save(folder)
    io.write_json(meta, Path(folder) / "provenance.json")


def _score(folder, texts, splits, job: PretrainJob, device, params, log, predicted: list) -> list[dict]:
    import torch

    with torch.no_grad():
        scoring = Scoring(
            algorithm=job.algorithm, seed=job.eval_seed, batch_size=job.eval_batch_size, max_length=params["max_length"]
        )
        return evaluate_checkpoint(
            folder, texts, splits, scoring=scoring, device=device, log=log, predictions=predicted
        )


def labels_of_epoch(epoch: int, table):
    """One evaluated epoch's labels table (:func:`tecb.cluster.algorithms.labels_table`) with ``epoch`` (int16)
    in front: the rows of a pretrain job's labels file."""
    import pyarrow as pa

    return table.add_column(0, "epoch", pa.array(np.full(table.num_rows, epoch, dtype=np.int16)))


def run(job: PretrainJob, out_path, *, log=print, timings_path=None, labels_path=None) -> None:
    """Workflow entry point: train, then write the per-(epoch, split) scores atomically; the durations go
    to ``timings_path`` (JSON), when given, never into the scores; every evaluated epoch's predicted clusters to
    ``labels_path`` (``epoch``, then the cluster stage's labels columns), when given.

    The workflow gives ``device`` and ``eval_batch_size`` from the config schema's ``pretrain.device`` /
    ``pretrain.eval_batch_size``, not the job's defaults."""
    import pyarrow as pa

    started, timings, clock = time.perf_counter(), [], {}
    labels: list = []
    rows = pretrain(job, log=log, timings=timings, clock=clock, labels=labels)
    table = pa.Table.from_pylist(rows)
    table = table.replace_schema_metadata(
        io.tecb_metadata(
            {
                "method": job.method,
                "seed": job.seed,
                "params": job.params,
                "model_dir": str(job.model_dir),
                # Table 5's yardstick: the loss before training beside the loss at chance
                "step0_loss": clock.get("step0_loss"),
                "chance_loss": clock.get("chance_loss"),
            }
        )
    )
    io.write_table(table, out_path)
    if labels_path is not None:
        io.write_table(pa.concat_tables(labels), labels_path)
    if timings_path is not None:
        io.write_json(
            {
                "method": job.method,
                "seed": job.seed,
                "epochs": timings,
                # a resumed job's earlier processes up to their last saved state, and this one's
                "total_seconds": round(clock.get("earlier", 0.0) + time.perf_counter() - started, 3),
                "processes": clock.get("processes", 1),
                "earlier_seconds": round(clock.get("earlier", 0.0), 3),
            },
            timings_path,
        )


def run_pretrain_job(job, *, log=print) -> None:
    """A pretrain job (``job``: the ``snakemake`` object of its script): torch on the job's threads, then
    :func:`run` of its :meth:`PretrainJob.from_job`, writing its outputs ``scores`` and ``timings``."""
    import torch

    torch.set_num_threads(job.threads)
    run(
        PretrainJob.from_job(job),
        job.output.scores,
        log=log,
        timings_path=job.output.timings,
        labels_path=job.output.get("labels"),
    )
