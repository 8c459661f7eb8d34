"""Every dataset of one model in one process (``embed.batch: true``).

On small data embedding a dataset takes a fraction of the seconds that starting Python and importing
scikit-learn or sentence-transformers cost (~1.5 CPU-s for TF-IDF, ~3-4 for a transformer;
benchmarks/demo_overhead.md), so one job per model embeds all its datasets, one after another, each with
:func:`tecb.embed.encode.embed_dataset`, the function an embed job calls: the files are the same bytes either way.
Reruns stay exact: each dataset's key is the embedding cache's key (:func:`tecb.embed.cache.cache_key`: the
model's resolved settings for that dataset, what its files are, the TF-IDF seed, the sha256 of the dataset's
texts), kept in the batch's keys file with the sha256 of each embeddings file; the rule marks its outputs
``update()``, and a rerun embeds only the datasets whose key changed or whose files are missing or not the bytes
recorded when they were written (:func:`tecb.io.keep_or_compute`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tecb.embed.cache import ModelFiles


def run_embed_batch(
    members: Sequence[dict],
    *,
    embed_options: dict,
    seed: int | None,
    model: ModelFiles,
    keys_path,
    cache_dir=None,
    log=print,
) -> list[str]:
    """Embed every dataset that is not already up to date; returns the datasets embedded.

    A member is a dict: ``dataset`` (its name), ``settings`` (the resolved settings of the model for it,
    :func:`tecb.embed.spec.encoder_settings`), ``texts`` (its texts.parquet) and the two outputs ``embeddings``
    and ``timings``. ``model`` says what the model's files are (:func:`tecb.embed.cache.model_content`);
    ``embed_options`` and ``seed`` are an embed job's (:class:`tecb.embed.encode.EmbedJob`). With
    ``cache_dir`` (config ``embed.cache_dir``) a dataset to embed is the store's entry of its key, reused or
    computed, as an embed job's (:func:`tecb.embed.cache.serve_from_entry`).
    """
    from tecb import io
    from tecb.embed.cache import cache_key, model_content, serve_from_entry
    from tecb.embed.spec import file_sha256, recorded_digest

    names = [m["dataset"] for m in members]
    if len(set(names)) != len(names):
        raise ValueError(f"a model's embedding batch names a dataset twice: {names}")
    digest_files = [model.digest] if model.digest else []
    content = model_content(model)
    digest = recorded_digest(digest_files)
    # datasets no longer in the batch are dropped (written with the first change, or at the end)
    keys = {name: key for name, key in io.read_keys(keys_path, log=log).items() if name in names}
    computed = []
    for member in members:
        key = cache_key(
            settings=member["settings"],
            seed=seed,
            texts_sha256=file_sha256(member["texts"]),
            model_content=content,
        )

        def embed(paths, member=member, key=key):
            # the file names its key, as every embeddings file (tecb.embed.cache.keyed_metadata)
            _embed_member({**member, **paths, "cache_key": key}, embed_options, seed=seed, digest=digest, log=log)

        def compute(member=member, key=key, embed=embed):
            if cache_dir is None:
                embed({})
                return
            outputs = {name: member[name] for name in ("embeddings", "timings")}
            serve_from_entry(cache_dir, key, compute=embed, outputs=outputs, log=log)

        if io.keep_or_compute(
            keys,
            keys_path,
            name=member["dataset"],
            key=key,
            outputs=[member["embeddings"]],
            compute=compute,
            log=log,
            unhashed=[member["timings"]],  # durations: never the same bytes twice
        ):
            computed.append(member["dataset"])
    io.write_keys(keys, keys_path)
    log(f"{len(computed)} of {len(members)} datasets embedded, {len(members) - len(computed)} kept")
    return computed


def _embed_member(member: dict, embed_options: dict, *, seed: int | None, digest: str | None, log) -> None:
    """Embed one member of a batch (:func:`run_embed_batch`) to its outputs."""
    from tecb.embed.encode import EmbedJob, embed_dataset

    log(f"{member['dataset']}: embedding")
    job = EmbedJob(
        texts=member["texts"],
        embeddings=member["embeddings"],
        settings=member["settings"],
        embed_options=embed_options,
        seed=seed,
        dataset=member["dataset"],
        model_digest=digest,
        timings=member["timings"],
        cache_key=member["cache_key"],
    )
    embed_dataset(job, log=log)
