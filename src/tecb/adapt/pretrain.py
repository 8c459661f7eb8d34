"""Adaptive pre-training: continue pre-training a checkpoint on a dataset's texts (paper §5, Table 5, Figure 2).

Two methods, both plain, seeded torch loops:

- ``wwm``: masked language modelling with whole-word masking (:class:`WholeWordMaskCollator`);
- ``tsdae``: the denoising auto-encoder of sentence-transformers (``DenoisingAutoEncoderLoss``, decoder
  tied to the encoder) on texts damaged by :func:`delete_words`.

At every scheduled epoch the current weights are saved as a plain Hugging Face checkpoint and scored
exactly as the benchmark scores a plain checkpoint: loaded by :func:`tecb.embed.encode.load_sentence_transformer`
(mean pooling over the last hidden states with the attention mask), encoded by
:func:`tecb.embed.encode.encode_transformer`, clustered and scored split by split by :func:`tecb.cluster.algorithms.score_splits`.
Training on the texts that are then clustered is the paper's transductive setting.
"""

from __future__ import annotations

import math
import random
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from tecb import io
from tecb.embed.encode import Progress, encode_transformer, library_versions, load_sentence_transformer, read_texts

METHODS = ("wwm", "tsdae")


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
    path,
    texts: list[str],
    splits,
    algorithm: dict,
    device=None,
    batch_size: int = 32,
    max_seq_length: int | None = None,
    *,
    seed: int,
    log=print,
) -> list[dict]:
    """Score a plain checkpoint on a dataset exactly as the embed + cluster stages do (mean pooling, raw vectors)."""
    from tecb.cluster.algorithms import score_splits

    vectors = encode_checkpoint(path, texts, device, batch_size, max_seq_length)
    points = ((s, vectors[ids], labels) for s, ids, labels in splits)
    return score_splits(points, algorithm, seed=seed, log=log)


# --- training -----------------------------------------------------------------------------


@contextmanager
def seeded_global_rngs(seed: int):
    """Seed Python's, NumPy's and torch's global generators (dropout, TSDAE's noise) for the block, then put
    back the states they had: the training is reproducible and the caller's process state is left as found."""
    import torch

    states = random.getstate(), np.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)  # all devices
        try:
            yield
        finally:
            random.setstate(states[0])
            np.random.set_state(states[1])


def resolve_device(device: str | None) -> str:
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def _autocast(device: str):
    """bf16 (or fp16 with a grad scaler) autocast on CUDA; nothing on CPU."""
    import contextlib

    import torch

    if not device.startswith("cuda"):
        return contextlib.nullcontext, None, "float32"
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
    return (lambda: torch.autocast("cuda", dtype=dtype)), scaler, str(dtype).replace("torch.", "")


def _batches(n: int, batch_size: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def _build(method: str, model_dir, params: dict, device: str):
    """Return ``(trainable module, step(texts, rng) -> loss, save(dir))`` for a method."""
    if method == "wwm":
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForMaskedLM.from_pretrained(model_dir).to(device)
        collator = WholeWordMaskCollator(
            tokenizer, params["mlm_probability"], params["max_length"], seed=params["seed"]
        )

        def step(texts, rng):
            batch = {k: v.to(device) for k, v in collator(texts).items()}
            return model(**batch).loss

        def save(out):
            model.save_pretrained(out)
            tokenizer.save_pretrained(out)

        return model, step, save
    if method == "tsdae":
        from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

        encoder = load_sentence_transformer(str(model_dir), device=device, max_seq_length=params["max_length"])
        loss_fn = DenoisingAutoEncoderLoss(encoder, tie_encoder_decoder=True).to(device)

        def step(texts, rng):
            noisy = [delete_words(t, params["deletion_ratio"], rng) for t in texts]
            prepare = getattr(encoder, "preprocess", None) or encoder.tokenize
            features = [
                {k: v.to(device) if hasattr(v, "to") else v for k, v in prepare(x).items()} for x in (noisy, texts)
            ]
            return loss_fn(features, None)

        def save(out):
            encoder.transformers_model.save_pretrained(out)
            encoder.tokenizer.save_pretrained(out)

        return loss_fn, step, save
    raise ValueError(f"unknown pre-training method {method!r}; known: {', '.join(METHODS)}")


def pretrain(
    model_dir,
    texts_path,
    splits_path,
    method: str,
    params: dict,
    eval_epochs: list[int],
    algorithm: dict,
    checkpoint_dir,
    *,
    seed: int,
    device: str | None = None,
    eval_batch_size: int = 32,
    log=print,
    eval_seed: int,
    progress_every: float = 60.0,
    timings: list | None = None,
) -> list[dict]:
    """Continue pre-training ``model_dir`` on the dataset's unique texts; score it after each of ``eval_epochs``.

    ``seed`` seeds the training (one job per seed); ``eval_seed`` the clustering of each evaluation (the
    benchmark's config seed, so that epoch 0 would score like the benchmark's own k-means). A progress line
    (texts done / total in the epoch, rate, ETA of the epoch) is logged at most every ``progress_every`` seconds.

    ``params``: lr, batch_size, grad_accum, weight_decay, warmup_ratio, max_length and the method's own
    (mlm_probability / deletion_ratio). Writes the last checkpoint with ``provenance.json`` to
    ``checkpoint_dir`` (atomically) and returns one row per (epoch, split). Durations stay out of the rows (the
    scores are identical across reruns): one entry per evaluated epoch (``epoch``, ``train_seconds`` of training
    since the start, ``eval_seconds`` of this evaluation) is appended to ``timings`` when given. An evaluated
    epoch before the last is saved to a scratch folder beside ``checkpoint_dir`` (:func:`tecb.io.scratch_dir`,
    named like every temporary, so a killed job's is cleaned up), removed after its scoring.
    """
    with seeded_global_rngs(seed):
        return _train(
            model_dir,
            texts_path,
            splits_path,
            method,
            params,
            eval_epochs,
            algorithm,
            checkpoint_dir,
            seed=seed,
            device=device,
            eval_batch_size=eval_batch_size,
            log=log,
            eval_seed=eval_seed,
            progress_every=progress_every,
            timings=timings,
        )


def _train(
    model_dir,
    texts_path,
    splits_path,
    method: str,
    params: dict,
    eval_epochs: list[int],
    algorithm: dict,
    checkpoint_dir,
    *,
    seed: int,
    device: str | None = None,
    eval_batch_size: int = 32,
    log=print,
    eval_seed: int,
    progress_every: float = 60.0,
    timings: list | None = None,
) -> list[dict]:
    """The body of :func:`pretrain`, under its seeded global generators."""
    import torch
    from transformers import get_constant_schedule_with_warmup

    if method not in METHODS:
        raise ValueError(f"unknown pre-training method {method!r}; known: {', '.join(METHODS)}")
    eval_epochs = sorted({int(e) for e in eval_epochs})
    if not eval_epochs or eval_epochs[0] < 1:
        raise ValueError(f"eval_epochs must be positive integers, got {eval_epochs}")
    device = resolve_device(device)
    texts = read_texts(texts_path)
    import pyarrow.parquet as pq

    splits = list(io.iter_splits(pq.read_table(splits_path)))
    params = dict(params, seed=seed)
    rng = np.random.default_rng(seed)
    module, step, save = _build(method, model_dir, params, device)
    trainable = [p for p in module.parameters() if p.requires_grad]
    decay = [p for p in trainable if p.ndim > 1]
    no_decay = [p for p in trainable if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": params["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=params["lr"],
    )
    batch_size, accum = int(params["batch_size"]), int(params["grad_accum"])
    steps_per_epoch = math.ceil(math.ceil(len(texts) / batch_size) / accum)
    total_steps = steps_per_epoch * eval_epochs[-1]
    warmup = int(round(params["warmup_ratio"] * total_steps))
    scheduler = get_constant_schedule_with_warmup(optimizer, warmup)
    autocast, scaler, amp_dtype = _autocast(device)
    log(
        f"{method}: {len(texts)} texts, batch {batch_size} x {accum}, {steps_per_epoch} optimizer steps/epoch, "
        f"{eval_epochs[-1]} epochs, warmup {warmup} steps, device {device}, autocast {amp_dtype}"
    )

    rows, step_count, started, evaluating = [], 0, time.perf_counter(), 0.0
    checkpoint_dir = Path(checkpoint_dir)
    for epoch in range(1, eval_epochs[-1] + 1):
        module.train()
        losses, micro = [], 0
        optimizer.zero_grad(set_to_none=True)
        batches = list(_batches(len(texts), batch_size, rng))
        progress, last, done = Progress(len(texts), log, what=f"epoch {epoch}: ", heartbeat=0), time.perf_counter(), 0
        for i, idx in enumerate(batches):
            with autocast():
                loss = step([texts[j] for j in idx], rng) / accum
            (scaler.scale(loss) if scaler else loss).backward()
            losses.append(float(loss.detach()) * accum)
            micro += 1
            if micro == accum or i == len(batches) - 1:
                if scaler:
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                micro, step_count = 0, step_count + 1
            done += len(idx)
            if time.perf_counter() - last >= progress_every and done < len(texts):
                progress.update(done)
                last = time.perf_counter()
        train_loss = float(np.mean(losses))
        log(f"epoch {epoch}: mean loss {train_loss:.4f}, {step_count} optimizer steps")
        if epoch in eval_epochs:
            module.eval()
            eval_started = time.perf_counter()
            train_seconds = eval_started - started - evaluating  # training only, the evaluations left out
            meta = {
                "base_model": str(model_dir),
                "method": method,
                "epoch": epoch,
                "seed": seed,
                "optimizer_steps": step_count,
                "params": params,
                "device": device,
                "autocast": amp_dtype,
                "texts": str(texts_path),
                "n_texts": len(texts),
                "versions": library_versions(),
            }
            if epoch == eval_epochs[-1]:
                with io.atomic_dir(checkpoint_dir) as tmp:
                    _save_checkpoint(save, tmp, meta)
                scored = _score(
                    checkpoint_dir, texts, splits, algorithm, device, eval_batch_size, params, eval_seed, log
                )
            else:
                with io.scratch_dir(checkpoint_dir) as scratch:
                    _save_checkpoint(save, scratch, meta)
                    scored = _score(scratch, texts, splits, algorithm, device, eval_batch_size, params, eval_seed, log)
            mean_v = float(np.mean([r["v_measure"] for r in scored]))
            log(f"epoch {epoch}: mean V-measure {mean_v:.4f}")
            for r in scored:
                rows.append({"epoch": epoch, "optimizer_steps": step_count, "train_loss": train_loss, **r})
            evaluating += time.perf_counter() - eval_started
            if timings is not None:
                timings.append(
                    {
                        "epoch": epoch,
                        "train_seconds": round(train_seconds, 3),
                        "eval_seconds": round(time.perf_counter() - eval_started, 3),
                    }
                )
    return rows


def _save_checkpoint(save, folder, meta: dict) -> None:
    """A plain Hugging Face checkpoint with its ``provenance.json``."""
    save(folder)
    io.write_json(meta, Path(folder) / "provenance.json")


def _score(folder, texts, splits, algorithm, device, eval_batch_size, params, eval_seed, log) -> list[dict]:
    import torch

    with torch.no_grad():
        return evaluate_checkpoint(
            folder,
            texts,
            splits,
            algorithm,
            device=device,
            batch_size=eval_batch_size,
            max_seq_length=params["max_length"],
            seed=eval_seed,
            log=log,
        )


def run(
    *,
    model_dir,
    texts_path,
    splits_path,
    out_path,
    checkpoint_dir,
    method: str,
    params: dict,
    eval_epochs,
    algorithm: dict,
    seed: int,
    eval_seed: int,
    device: str,
    eval_batch_size: int,
    log=print,
    timings_path=None,
) -> None:
    """Workflow entry point: train, then write the per-(epoch, split) scores atomically; the durations go
    to ``timings_path`` (JSON), when given, never into the scores.

    Keyword arguments only; ``device`` and ``eval_batch_size`` have no default here (the config schema's
    ``pretrain.device`` / ``pretrain.eval_batch_size`` hold them)."""
    import pyarrow as pa

    started, timings = time.perf_counter(), []
    rows = pretrain(
        model_dir,
        texts_path,
        splits_path,
        method,
        params,
        eval_epochs,
        algorithm,
        checkpoint_dir,
        seed=seed,
        device=device,
        eval_batch_size=eval_batch_size,
        log=log,
        eval_seed=eval_seed,
        timings=timings,
    )
    table = pa.Table.from_pylist(rows)
    table = table.replace_schema_metadata(
        io.tecb_metadata({"method": method, "seed": seed, "params": params, "model_dir": str(model_dir)})
    )
    io.write_table(table, out_path)
    if timings_path is not None:
        io.write_json(
            {
                "method": method,
                "seed": seed,
                "epochs": timings,
                "total_seconds": round(time.perf_counter() - started, 3),
            },
            timings_path,
        )
