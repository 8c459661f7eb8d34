"""The content hash of a local model directory (every file's sha256), an input of its embed jobs."""

import json

from tecb.embed.spec import paths_digest
from tecb.io import write_text
from tecb.runlog import open_log

log = open_log(snakemake.log[0])
digest = paths_digest(snakemake.params.path)
log(f"{snakemake.params.path}: {len(digest['files'])} files, sha256 {digest['sha256']}")
write_text(json.dumps(digest, indent=1, sort_keys=True) + "\n", snakemake.output[0])
