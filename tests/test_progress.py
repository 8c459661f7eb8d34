"""Progress lines: one per update, and a heartbeat with rate and ETA while a step runs long."""

import gc
import time

from tecb.embed.encode import Progress


def test_heartbeat_logs_rate_and_eta_between_updates_and_stops_at_the_end():
    lines = []
    progress = Progress(100, lines.append, heartbeat=0.2)
    progress.update(10)
    time.sleep(0.7)  # a long step: the heartbeat says so, with the count so far, its rate and an ETA
    beats = [line for line in lines if "still working" in line]
    assert beats and all(
        line.startswith("10/100 texts (10%)") and "texts/s" in line and "ETA" in line for line in beats
    )
    progress.update(100)
    assert lines[-1].startswith("100/100 texts (100%)") and lines[-1].endswith("ETA 0:00:00")
    n = len(lines)
    time.sleep(0.5)
    assert len(lines) == n  # done: no more lines


def test_no_heartbeat_when_off_closed_or_dropped():
    lines = []
    Progress(10, lines.append, heartbeat=0).update(1)
    closed = Progress(10, lines.append, heartbeat=0.1)
    closed.close()
    dropped = Progress(10, lines.append, heartbeat=0.1)
    del dropped
    gc.collect()
    time.sleep(0.4)
    assert lines == ["1/10 texts (10%), " + lines[0].split(", ", 1)[1]] and "still working" not in lines[0]
    assert closed.beat() is None


class _BatchedEncoder:
    """sentence-transformers' shape: ``encode`` runs the module once per batch of the chunk it is given."""

    def __init__(self):
        import torch

        class Module(torch.nn.Module):
            def forward(self, features):
                return {"sentence_embedding": features["input_ids"].float()}

        self.module = Module()
        self.register_forward_hook = self.module.register_forward_hook

    def encode(self, chunk, batch_size, **kwargs):
        import torch

        out = [
            self.module({"input_ids": torch.tensor([[len(t)] for t in chunk[i : i + batch_size]])})[
                "sentence_embedding"
            ]
            for i in range(0, len(chunk), batch_size)
        ]
        return torch.cat(out).numpy()


def test_a_line_per_batch_inside_a_chunk_and_the_same_vectors(monkeypatch):
    """The embed log shows each batch of a long chunk (not `0/N ... ETA ?` until the chunk is done); the batch
    counting only reads, so the vectors are those of an encode without it."""
    from tecb.embed import encode

    texts = [f"Satz {'x' * i}" for i in range(40)]
    quiet = [v for _, v in encode.encode_transformer(_BatchedEncoder(), texts, batch_size=4, chunk_size=40)]
    lines = []
    monkeypatch.setattr(encode, "BATCH_LINE_SECONDS", 0.0)
    model = _BatchedEncoder()
    logged = [v for _, v in encode.encode_transformer(model, texts, batch_size=4, chunk_size=40, log=lines.append)]
    assert [line.split(" texts")[0] for line in lines] == [f"encoded {4 * k}/40" for k in range(1, 11)] + [
        "encoded 40/40"
    ]
    assert all((a == b).all() for a, b in zip(quiet, logged))
    assert not model.module._forward_hooks  # the hook is gone after the loop
    # at most one batch line a second by default: a fast model floods no log
    progress = encode.Progress(40, lines.append, heartbeat=0)
    assert progress.advance(4, min_interval=3600) is None and progress.done == 4
