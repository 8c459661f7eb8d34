"""argueBERT-style sentence-pair objectives (the argueBERT paper, ``shared/papers/004_*``): BERT's next-sentence
prediction is replaced by binary pair classification (similarity prediction, order prediction, graph-edge
validation), then the encoder is fine-tuned siamese (SBERT, cosine similarity with MSE, Eq. 1).

Phase ``pairs``: each pair ``[CLS] a [SEP] b [SEP]`` goes through the encoder as one sequence; the [CLS] state
goes through a head of the shape of BERT's pooler + NSP classifier (dense, tanh, 2 logits), one head per
objective, trained with cross-entropy on the pair's 0/1 label. Phase ``siamese``: the pairs of the objectives in
``siamese_objectives`` (their label read as similarity 1/0) fine-tune the bi-encoder with sentence-transformers'
``CosineSimilarityLoss`` (MSE between cos(u, v) and the label). The paper pre-trains MLM together with its pair
objective from BERT's own pre-training data; here the encoder is already pre-trained and only the pair objective
continues (no MLM).
"""

from __future__ import annotations

import math

from tecb.adapt.training import Phase, chunked, encode_features, optimizer_settings

# argueBERT Appendix Table 5 (pre-training: lr 2e-5 for BERT-base, max seq length 128; its 100,000 / 1,000,000
# steps are replaced by epochs over the given pairs; the batch size is not stated: 32 here) and Table 6
# (siamese fine-tuning with sentence-transformers: lr 2e-5, batch 16, 5 epochs, AdamW, weight decay 0.01).
DEFAULTS = {
    "lr": 2e-5,
    "batch_size": 32,
    "epochs": 1,
    "max_length": 128,
    "warmup_ratio": 0.0,
    "weight_decay": 0.01,
    "max_grad_norm": 1.0,
    "siamese_lr": 2e-5,
    "siamese_batch_size": 16,
    "siamese_epochs": 5,
    "siamese_warmup_ratio": 0.1,
    "siamese_objectives": ["similarity", "reply"],
    "head_lr": None,  # the pair phase's classifier heads' own learning rate (None: lr)
}

OBJECTIVES = ("similarity", "order", "reply")


class PairHeads:
    """One binary classifier per objective over the encoder's [CLS] state (BERT pooler + NSP head shape)."""

    def __new__(cls, hidden_size: int, objectives):
        import torch

        class _Heads(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.objectives = list(objectives)
                self.heads = torch.nn.ModuleDict(
                    {
                        name: torch.nn.Sequential(
                            torch.nn.Linear(hidden_size, hidden_size), torch.nn.Tanh(), torch.nn.Linear(hidden_size, 2)
                        )
                        for name in self.objectives
                    }
                )

            def forward(self, cls_states, objectives: list[str]):
                """Logits (B, 2): row b through the head of ``objectives[b]``."""
                rows = [self.heads[name](cls_states[b : b + 1]) for b, name in enumerate(objectives)]
                return torch.cat(rows, dim=0)

        return _Heads()


def pair_logits(model, heads, a: list[str], b: list[str], objectives: list[str], max_length: int, device: str):
    """Cross-encode the pairs with the model's transformer; the heads' logits (B, 2)."""
    transformer = model[0]
    enc = transformer.tokenizer(
        list(a), list(b), truncation=True, max_length=int(max_length), padding=True, return_tensors="pt"
    ).to(device)
    hidden = transformer.auto_model(**enc).last_hidden_state
    return heads(hidden[:, 0].float(), objectives)


def check_pairs(pairs) -> None:
    if not pairs:
        raise ValueError("argue needs sentence pairs (TrainingData.pairs), got none")
    for i, p in enumerate(pairs):
        if len(p) != 4 or p[2] not in (0, 1) or p[3] not in OBJECTIVES:
            raise ValueError(
                f"argue: pair {i} must be (text_a, text_b, label 0/1, objective in {', '.join(OBJECTIVES)}), got {p!r}"
            )


def _siamese_phase(model, pairs: list, settings: dict, device: str) -> Phase | None:
    """The siamese phase (cosine similarity of the two texts' embeddings against the pair's label) on the pairs of
    ``siamese_objectives``; None where ``siamese_epochs`` is 0."""
    import torch
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    siamese = [p for p in pairs if p[3] in set(settings["siamese_objectives"])]
    if int(settings["siamese_epochs"]) > 0 and not siamese:  # never drop a phase silently
        raise ValueError(
            f"argue: the siamese phase trains on the pairs of siamese_objectives {list(settings['siamese_objectives'])}"
            f", but the training data has pairs of {', '.join(sorted({p[3] for p in pairs}))} only (the reply pairs need a forum: "
            "adapt.protocol.reply_source); set siamese_objectives to objectives that have pairs, or siamese_epochs: 0 "
            "to train the pair phase alone"
        )
    if int(settings["siamese_epochs"]) > 0:
        cosine_loss = CosineSimilarityLoss(model)

        def siamese_loss(batch):
            rows = [siamese[i] for i in batch]
            features = [encode_features(model, [r[c] for r in rows], device) for c in (0, 1)]
            return cosine_loss(features, torch.tensor([float(r[2]) for r in rows], device=device))

        return Phase(
            name="siamese",
            batches=lambda rng: chunked(rng.permutation(len(siamese)), int(settings["siamese_batch_size"])),
            loss=siamese_loss,
            **optimizer_settings(settings, prefix="siamese_"),
            info={"objectives": sorted({p[3] for p in siamese}), "pairs": len(siamese)},
        )
    return None


def phases(*, model, data, settings: dict, rng, device: str) -> list[Phase]:
    import torch
    import torch.nn.functional as F

    pairs = list(data.pairs)
    check_pairs(pairs)
    unknown = sorted(set(settings["siamese_objectives"]) - set(OBJECTIVES))
    if unknown:
        raise ValueError(f"argue: siamese_objectives {unknown} unknown; known: {', '.join(OBJECTIVES)}")
    # the pair phase trains one objective (the paper's one model per objective); "" = every objective given
    trained = [p for p in pairs if not data.objective or p[3] == data.objective]
    if not trained:
        raise ValueError(f"argue: no pair of objective {data.objective!r} to train on")
    objectives = sorted({p[3] for p in trained})
    heads = PairHeads(model[0].auto_model.config.hidden_size, objectives)

    def pair_loss(batch):
        rows = [trained[i] for i in batch]
        logits = pair_logits(
            model,
            heads,
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[3] for r in rows],
            settings["max_length"],
            device,
        )
        return F.cross_entropy(logits, torch.tensor([r[2] for r in rows], device=device))

    out = [
        Phase(
            name="pairs",
            batches=lambda rng: chunked(rng.permutation(len(trained)), int(settings["batch_size"])),
            loss=pair_loss,
            chance_loss=lambda batch: math.log(2),  # two classes, equal logits
            **optimizer_settings(settings),
            modules=[heads],
            info={"objective": data.objective or "+".join(objectives), "pairs": len(trained)},
        )
    ]
    siamese = _siamese_phase(model, pairs, settings, device)
    return out + ([siamese] if siamese is not None else [])
