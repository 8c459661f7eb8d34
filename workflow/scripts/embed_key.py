"""The embedding-cache key of one (model, dataset) into results/{run}/embeddings/{model}/{dataset}.key.json
(tecb.embed.cache: model settings, model files, TF-IDF seed, texts' sha256)."""

from tecb.embed.cache import cache_key, model_content
from tecb.embed.job import job_model_files
from tecb.embed.spec import file_sha256
from tecb.io import write_json
from tecb.runlog import finish, open_log

log = open_log(snakemake.log[0])
record = {
    "model": snakemake.wildcards.model,
    "dataset": snakemake.wildcards.dataset,
    "settings": snakemake.params.settings,
    "seed": snakemake.params.seed,
    "texts_sha256": file_sha256(snakemake.input.texts),
    "model_content": model_content(job_model_files(snakemake)),
}
record["key"] = cache_key(
    settings=record["settings"],
    seed=record["seed"],
    texts_sha256=record["texts_sha256"],
    model_content=record["model_content"],
)
log(f"cache key {record['key']}")
write_json(record, snakemake.output[0])
finish()  # skip the interpreter teardown: every output is written
