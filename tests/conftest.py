"""Shared fixtures: running the workflow in a temporary copy of the project."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ["workflow", "config", "envs", "profiles", "reference", ".test"]
SHARED = ROOT.parent / "shared"  # present beside the checkout in CI; tests using it skip without it


#: The demo's generated raw files (written by the demo_data rule), as config/demo.yaml points to them: the
#: `sources` of the tests' own small configs.
DEMO_SOURCES = {
    "germeval2019": {"path": "resources/demo/germeval2019.zip"},
    "million_posts": {"path": "resources/demo/corpus.sqlite3"},
    "reddit": {"path": "resources/demo/submissions.parquet"},
}


def copy_project(dest: Path) -> Path:
    """Copy what a user clones (workflow/, config/, profiles/, reference/; src/ linked) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = ROOT / name
        if src.is_dir():
            outputs = ("results", "resources", "logs", ".snakemake") if name == ".test" else ()  # of earlier runs
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", *outputs))
        elif src.exists():
            shutil.copy2(src, dest / name)
    # the library the jobs import (workflow/Snakefile puts the project's src/ first on sys.path and PYTHONPATH):
    # this checkout's, not whatever `pip install -e` points at
    (dest / "src").symlink_to(ROOT / "src", target_is_directory=True)
    # numba's cache of UMAP's compiled code (config cluster.numba_cache, default .snakemake/numba-cache) shared by
    # every copy of this test session: the first UMAP job compiles (15-50 CPU-s), the others load. Numba writes
    # its cache files atomically and keys them by the compiled source files, so parallel workers may share it.
    if NUMBA_CACHE_ENV in os.environ:
        (dest / ".snakemake").mkdir(exist_ok=True)
        (dest / ".snakemake" / "numba-cache").symlink_to(os.environ[NUMBA_CACHE_ENV], target_is_directory=True)
    return dest


NUMBA_CACHE_ENV = "TECB_TEST_NUMBA_CACHE"
#: the test session's folder for the packaged real models (:func:`_packaged_models_once`)
REAL_MODELS_ENV = "TECB_TEST_REAL_MODELS"
#: the test session's folder for the finished runs its files share across pytest-xdist workers (:func:`shared_run`)
SHARED_RUNS_ENV = "TECB_TEST_SHARED_RUNS"
_SESSION_FOLDERS = (
    ("_tecb_numba_cache", NUMBA_CACHE_ENV, "tecb-numba-cache-"),
    ("_tecb_real_models", REAL_MODELS_ENV, "tecb-real-models-"),
    ("_tecb_shared_runs", SHARED_RUNS_ENV, "tecb-shared-runs-"),
)


def pytest_configure(config):
    """The session's numba cache directory (see :func:`copy_project`), made by the main process before pytest-xdist
    starts its workers, which inherit the environment variable. The test processes use it too (numba reads
    NUMBA_CACHE_DIR when first imported, after this): see :func:`umap_compilation_cached`."""
    # and the session's folders the workers share: the packaged real models (:func:`_packaged_models_once`), the
    # shared finished runs (:func:`shared_run`)
    for attribute, variable, prefix in _SESSION_FOLDERS:
        if not hasattr(config, "workerinput") and variable not in os.environ:
            os.environ[variable] = tempfile.mkdtemp(prefix=prefix)
            setattr(config, attribute, os.environ[variable])
    if NUMBA_CACHE_ENV in os.environ and "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_CACHE_DIR", os.environ[NUMBA_CACHE_ENV])


@pytest.fixture(scope="session")
def umap_compilation_cached():
    """UMAP's compiled code in this test process from the session's numba cache, as the workflow's jobs load it
    (:func:`tecb.cluster.reduce.cache_umap_compilation`), instead of compiling it again in each pytest worker
    (~20-35 CPU-s). Loaded code gives the same coordinates as compiled code:
    tests/test_reduce.py::test_numba_cache_gives_identical_umap compiles it in a fresh cache to check."""
    from tecb.cluster.reduce import cache_umap_compilation

    cache_umap_compilation()


def pytest_unconfigure(config):
    for attribute, variable, _ in _SESSION_FOLDERS:
        path = getattr(config, attribute, None)
        if path:
            shutil.rmtree(path, ignore_errors=True)
            del os.environ[variable]


# Parallel runs (`make test`: pytest -n auto --dist loadfile --no-loadscope-reorder): a file's tests run on one
# worker, so its module fixtures are built once; the finished runs several files read (the demo, the all-switches
# run) are built once per session whichever worker asks first (:func:`shared_run`). The files go out in collection
# order, which one rule sets (no list of durations): the files that run the workflow first, then those with a slow
# unit test, then the rest.
def pytest_collection_modifyitems(config, items):
    """Files with a test marked workflow or slurm first, then files with a test marked slow, then the others
    (otherwise as collected), so that no long file starts last while the other worker has nothing left (xdist
    would order files by test count: the one-test workflow files last)."""
    rank = {}
    for item in items:
        here = 0 if item.get_closest_marker("workflow") or item.get_closest_marker("slurm") else 1
        here = here if here == 0 or item.get_closest_marker("slow") else 2
        rank[item.path] = min(rank.get(item.path, 2), here)
    items.sort(key=lambda item: rank[item.path])  # stable


# Whether the running test is marked `workflow` (set per test by the autouse fixture below): run_snakemake refuses
# to run in a test without the mark, so `make test-fast` (-m "not workflow") never starts snakemake.
_CURRENT_TEST = {"workflow": True}


@pytest.fixture(autouse=True)
def _note_workflow_marker(request):
    _CURRENT_TEST["workflow"] = request.node.get_closest_marker("workflow") is not None
    yield
    _CURRENT_TEST["workflow"] = True


def run_snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None):
    """Run ``python -m snakemake`` in ``workdir``; return the CompletedProcess (stdout+stderr in .stdout).

    A run in this process's environment (``env`` not given) is a fork of this process's snakemake server
    (:func:`_forked_run`), the same function with the same arguments, folder and environment, without Python's
    start and snakemake's imports again; its jobs are the processes `python -m snakemake` starts. No wall-clock
    limit: a slow machine must not fail a correct run (a hung run is stopped by the CI job's limit). Only for
    tests marked ``@pytest.mark.workflow``."""
    if not _CURRENT_TEST["workflow"]:
        raise AssertionError(
            "a test that runs snakemake must be marked @pytest.mark.workflow (make test-fast skips it)"
        )
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0", **(env or {})}
    if env is None:
        proc = _forked_run(workdir, args, full_env)
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=full_env,
        )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-6000:]}")
    return proc


#: this process's snakemake server (tests/snakemake_forks.py --serve) and the environment it was started with
_FORK_SERVER: dict = {}


def _stop_server(server: subprocess.Popen) -> None:
    """End the server (its stdin closed) and wait for it, so that its CPU time is this process's children's."""
    if server.poll() is None:
        server.stdin.close()
        server.wait()


def _forked_run(workdir: Path, args, full_env: dict) -> subprocess.CompletedProcess:
    """``python -m snakemake ARGS`` in ``workdir`` as a fork of a process that imported snakemake's command line and
    plugins once (tests/snakemake_forks.py): a `snakemake -n` that stops at a config check costs ~0.8 CPU-s
    instead of ~2.8, its output the same; a run that executes jobs saves the same start. The server is started on
    first use, with this process's environment; started again when that changed (but for the running test's
    name)."""
    import json

    server = _FORK_SERVER.get("process")
    # the environment the server imported in; pytest's name of the running test changes with every test, and each
    # fork takes the whole environment of its call
    same = {k: v for k, v in full_env.items() if k != "PYTEST_CURRENT_TEST"}
    if server is None or server.poll() is not None or _FORK_SERVER["env"] != same:
        if server is not None:
            _stop_server(server)
        server = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "snakemake_forks.py"), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=full_env,
            # in a folder of its own: tecb.unlock takes a process with `snakemake` in its command line, in a run's
            # folder, for a live run there (each fork changes to its test's folder, as `python -m snakemake -n` runs)
            cwd=tempfile.gettempdir(),
        )
        _FORK_SERVER.update(process=server, env=same)
        atexit.register(_stop_server, server)
    fd, log = tempfile.mkstemp(prefix="tecb-snakemake-", suffix=".log")
    os.close(fd)
    try:
        run = {"cwd": str(workdir), "args": list(args), "log": log, "env": full_env}
        server.stdin.write(json.dumps(run) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        if not answer:
            raise AssertionError(f"tests/snakemake_forks.py ended ({server.wait()}) before running {args}")
        output = Path(log).read_text()
    finally:
        os.unlink(log)
    return subprocess.CompletedProcess([sys.executable, "-m", "snakemake", *args], int(answer), output)


# The test suite's demo: config/demo.yaml with 5 of its 14 configurations, chosen so every algorithm, every
# reduction and both exact-Ward routes (raw = high-dimensional, reduced = low-dimensional) run once, and without
# its second TF-IDF model (`tfidf-64`: the same code as `tfidf` at another dim; a third of the per-model jobs);
# the rest of the demo (6 datasets, TF-IDF and the tiny BERT, pre-training, MTEB v2, tables, figures, report) is
# as `make demo` runs it.
DEMO_TEST_CONFIGURATIONS = """configurations:  # tests/conftest.py: every algorithm and every reduction once
  - {algorithm: kmeans, reduction: none}
  - {algorithm: agglomerative, reduction: none}
  - {algorithm: agglomerative, reduction: umap}
  - {algorithm: hdbscan, reduction: pca_umap}
  - {algorithm: dbstream, reduction: pca}
"""


#: The chance floor with the schema's fewest draws per split (the demo: 100): the same code, a tenth of the work.
DEMO_TEST_CHANCE = "  chance: {n_draws: 10}  # tests/conftest.py: the fewest draws the schema allows\n"

#: The demo's model the test demo leaves out (its line in config/demo.yaml's `models:`).
DEMO_TEST_DROPPED_MODEL = "tfidf-64"


def shrink_demo_config(workdir: Path) -> None:
    """Replace the `configurations` list of ``workdir``'s config/demo.yaml by :data:`DEMO_TEST_CONFIGURATIONS`,
    remove the model :data:`DEMO_TEST_DROPPED_MODEL` and give its `tables` section :data:`DEMO_TEST_CHANCE`."""
    path = workdir / "config" / "demo.yaml"
    text, n = re.subn(r"^configurations:\n(?:  - .*\n)+", DEMO_TEST_CONFIGURATIONS, path.read_text(), flags=re.M)
    if n != 1:
        raise AssertionError("config/demo.yaml has no `configurations:` list of `  - {...}` lines to replace")
    text, n = re.subn(rf"^  {re.escape(DEMO_TEST_DROPPED_MODEL)}: .*\n", "", text, flags=re.M)
    if n != 1:
        raise AssertionError(f"config/demo.yaml has no `  {DEMO_TEST_DROPPED_MODEL}: ...` line under `models:`")
    text, n = re.subn(r"^tables:\n", "tables:\n" + DEMO_TEST_CHANCE, text, flags=re.M)
    if n != 1 or re.search(r"^  chance:", text.replace(DEMO_TEST_CHANCE, ""), flags=re.M):
        raise AssertionError("config/demo.yaml needs one `tables:` section without its own `chance:` key")
    path.write_text(text)


def demo_run_config(workdir: Path) -> dict:
    """The config the demo fixture ran: ``workdir``'s config/demo.yaml as :func:`shrink_demo_config` left it."""
    return yaml.safe_load((workdir / "config" / "demo.yaml").read_text())


#: What the demo fixture's run printed (stdout and stderr), by its directory: for tests of the terminal output.
DEMO_RUN_OUTPUT: dict[Path, str] = {}
#: the folder the demo ran in and this worker's copy of it (a shared file must name neither)
DEMO_RUN_FOLDERS: list[Path] = []


def _build_demo(folder: Path) -> None:
    work = copy_project(folder / "p")
    shrink_demo_config(work)
    _CURRENT_TEST["workflow"] = True  # a session fixture: set up before the requesting test's own fixtures
    proc = run_snakemake(work, "--configfile", "config/demo.yaml", "--cores", "2", "--resources", "gpu=1")
    (folder / "run.log").write_text(proc.stdout)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> Path:
    """The offline demo with :data:`DEMO_TEST_CONFIGURATIONS`, run once per test session (:func:`shared_run`, for
    every pytest-xdist worker) in a fresh copy of the project; each worker's tests get their own copy of the
    finished run (some run snakemake in it again), its directory. Outputs are under ``results/demo/``
    (config/demo.yaml sets ``run: demo``); tests read the configurations from the copy's config/demo.yaml."""
    built = shared_run("demo", _build_demo)
    workdir = copy_run(built / "p", tmp_path_factory.mktemp("demo") / "p")
    DEMO_RUN_OUTPUT[workdir] = (built / "run.log").read_text()
    DEMO_RUN_FOLDERS.extend([built / "p", workdir])
    return workdir


REAL_DATA = SHARED / "data" / "real"  # the full real files (GermEval 2019 dev, 10kGNAD test)


@pytest.fixture(scope="session")
def real_models_dir(tmp_path_factory) -> dict[str, Path]:
    """The packaged real models placed once per test session (``make real``'s step): name -> folder."""
    from tecb.embed.packaged import place_packaged_models

    return place_packaged_models(_packaged_models_once(), log=lambda m: None)


_PACKAGED_MODELS: list[Path] = []


def _packaged_models_once() -> Path:
    """The packaged real models, placed on first use in the session's folder (:data:`REAL_MODELS_ENV`), which every
    pytest-xdist worker of the session shares (a lock keeps two from placing them at once; the e5 conversion costs
    ~14 CPU-s and writes 470 MB), removed when the session ends."""
    import fcntl

    from tecb.embed.packaged import place_packaged_models

    if not _PACKAGED_MODELS:
        folder = Path(os.environ[REAL_MODELS_ENV])
        with open(folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
            place_packaged_models(folder / "models", log=lambda m: None)
        _PACKAGED_MODELS.append(folder / "models")
    return _PACKAGED_MODELS[0]


def real_project(dest: Path, config_name: str, config: dict) -> Path:
    """A copy of the project for a real-data run: ``../shared/data/real`` linked into ``resources/real/`` (as a user
    puts the downloads there), the packaged models placed as ``make real`` does, ``config`` written to
    ``config/{config_name}.yaml``. Without the real files: a failure under ``TECB_REQUIRE_REAL_DATA=1`` (CI), else
    a skip."""
    if not REAL_DATA.exists():
        if os.environ.get("TECB_REQUIRE_REAL_DATA") == "1":
            pytest.fail(f"{REAL_DATA} is missing but TECB_REQUIRE_REAL_DATA=1")
        pytest.skip("no ../shared/data/real beside the checkout")
    work = copy_project(dest)
    (work / "resources" / "real").mkdir(parents=True)
    for name in ("germeval2019", "10kgnad"):
        (work / "resources" / "real" / name).symlink_to(REAL_DATA / name, target_is_directory=True)
    # placed once per test session (the e5 conversion writes 470 MB), linked where `make real` puts it
    (work / "resources" / "real" / "models").symlink_to(_packaged_models_once(), target_is_directory=True)
    (work / "config" / f"{config_name}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return work


def sigkill_once_written(process, path) -> None:
    """Kill ``process`` with SIGKILL as soon as ``path`` exists (a job's saved training state), then reap it."""
    import signal as _signal
    import time as _time

    while not Path(path).exists() and process.poll() is None:
        _time.sleep(0.01)
    os.kill(process.pid, _signal.SIGKILL)
    process.wait()


def shared_run(name: str, build) -> Path:
    """A folder built once per test session by ``build(folder)``, whichever pytest-xdist worker asks first (a lock
    keeps the others waiting; a build that failed is tried again by the next one), in the session's folder that
    every worker shares (:data:`SHARED_RUNS_ENV`), removed when the session ends. Tests read it or copy it
    (:func:`copy_run`), never change it."""
    import fcntl

    folder = Path(os.environ[SHARED_RUNS_ENV]) / name
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


def copy_run(src: Path, dest: Path) -> Path:
    """A copy of a finished run's project folder (src/ and the numba cache stay links; mtimes kept)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


# --- the all-switches run: a tiny config with every switch of the embed and cluster stages on ------------------

SWITCHED_DATASET = "TenKGnadClusteringS2S"
#: a small config over the demo's: one dataset, a TF-IDF and the tiny BERT (sharded with embed.shard_size: chunks
#: of 64 texts in every combination, as the chunk size is an embedding setting), a raw and a reduced configuration
SWITCHED_TINY = {
    "run": "sw",
    "datasets": {SWITCHED_DATASET: {"source": "million_posts", "text": "s2s", "n_splits": 3}},
    "models": {
        "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 32},
        "tiny-bert": {"name": "tiny BERT (random init)", "kind": "tiny-bert"},
    },
    "embed": {"batch_size": 16, "threads": 1, "chunk_size": 64},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}, {"algorithm": "kmeans", "reduction": "pca"}],
    "tables": {"chance": {"n_draws": 10}, "per_kind": False},
    "scoring": {"protocols": ["paper"]},
    "pretrain": {"enabled": False},
}
#: the arguments of every run of the tiny config (config/tiny.yaml over config/demo.yaml)
SWITCHED_ARGS = ("--configfile", "config/demo.yaml", "config/tiny.yaml", "--cores", "1", "--resources", "gpu=1")
#: the tiny config's outputs that no switch reaches (the dataset, the tiny BERT, the chance floor: made from the raw
#: files, texts and splits only), and the rules that write them and the raw files: built once (:func:`_prepared`)
SWITCHED_UPSTREAM = (
    f"results/sw/datasets/{SWITCHED_DATASET}/texts.parquet",
    f"results/sw/datasets/{SWITCHED_DATASET}/splits.parquet",
    "results/sw/models/tiny-bert",
    f"results/sw/chance/{SWITCHED_DATASET}.parquet",
)
SWITCHED_UPSTREAM_RULES = ("demo_data", "build_dataset", "tiny_bert", "chance")
#: (embed.batch, embed.cache_dir set, embed.shard_size set, cluster.batch)
DEFAULT_SWITCHES = (False, False, False, False)
ALL_SWITCHES = (True, True, True, True)


def switch_config(switches, cache_dir: str) -> dict:
    """The embed and cluster sections of ``switches`` (:data:`DEFAULT_SWITCHES`' order), the store in ``cache_dir``."""
    embed_batch, cache, shard, cluster_batch = switches
    return {
        "embed": {
            "batch": embed_batch,
            "cache_dir": cache_dir if cache else None,
            "shard_size": 150 if shard else None,  # two shards of whole 64-text chunks (0-128, 128-221)
        },
        "cluster": {"batch": cluster_batch},
    }


def write_switched_config(work: Path, switches, **embed) -> None:
    """config/tiny.yaml of :data:`SWITCHED_TINY` under ``switches`` (the store: resources/embedding-cache), with
    ``embed`` added to its embed section."""
    config = {**SWITCHED_TINY, **switch_config(switches, "resources/embedding-cache")}
    config["embed"] = {**SWITCHED_TINY["embed"], **config["embed"], **embed}
    (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def _prepared(folder: Path) -> None:
    work = copy_project(folder)
    write_switched_config(work, DEFAULT_SWITCHES)
    _CURRENT_TEST["workflow"] = True  # a session fixture: set up before the requesting test's own fixtures
    run_snakemake(work, *SWITCHED_UPSTREAM, *SWITCHED_ARGS)  # the targets before --resources (several values)


@pytest.fixture(scope="session")
def switched_prepared() -> Path:
    """A copy of the project with :data:`SWITCHED_UPSTREAM` built under the default switches, its `.snakemake/`
    records included; a run of the tiny config starts from a copy of it and must not run those jobs again."""
    return shared_run("prepared", _prepared)


@pytest.fixture(scope="session")
def all_switches_run(switched_prepared) -> Path:
    """The tiny config with every switch on (embed batch + store + shards + cluster batch) run to all targets from
    a copy of :func:`switched_prepared`, once per session for every file that reads or copies it
    (tests/test_embed_switches.py compares it with the default's bytes); what the run printed in ``run.log``, what
    a dry run of the same command then printed in ``dry-run.log``, both beside the project folder ``p``."""

    def build(folder):
        work = copy_run(switched_prepared, folder / "p")
        write_switched_config(work, ALL_SWITCHES)
        _CURRENT_TEST["workflow"] = True
        (folder / "run.log").write_text(run_snakemake(work, *SWITCHED_ARGS).stdout)
        (folder / "dry-run.log").write_text(run_snakemake(work, "-n", *SWITCHED_ARGS).stdout)

    return shared_run("all-switches", build)


# --- the workflow's rules as Snakemake reads them (tests/workflow_rules.py) --------------------------------------

#: config files under which the rules read are every rule the workflow defines: some are defined only when a config
#: asks for them (the embed stage's writers under the switches; the models table and leaderboard of kind: mteb)
RULE_CONFIGS = ((), ("config/demo.yaml", "config/all-switches.yaml"), ("config/modern.yaml",))


def _read_rules(folder: Path) -> None:
    import json

    work = copy_project(folder / "p")
    switches = switch_config(ALL_SWITCHES, "resources/embedding-cache")
    (work / "config" / "all-switches.yaml").write_text(yaml.safe_dump(switches, sort_keys=False))
    merged = {"included": set(), "ruleorder": [], "rules": {}}
    for configs in RULE_CONFIGS:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).parent / "workflow_rules.py"), str(work), *configs],
            cwd=work,
            capture_output=True,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        if proc.returncode != 0:
            raise AssertionError(f"Snakemake could not read the workflow under {configs}:\n{proc.stderr[-4000:]}")
        read = json.loads(proc.stdout)
        merged["included"] |= set(read["included"])
        merged["ruleorder"] += read["ruleorder"]
        merged["rules"].update(read["rules"])
    merged["included"] = sorted(merged["included"])
    (folder / "rules.json").write_text(json.dumps(merged))


@pytest.fixture(scope="session")
def workflow_rules() -> dict:
    """Snakemake's reading of the workflow under each of :data:`RULE_CONFIGS`, merged, once per test session: the
    files the Snakefile included (paths from the project root), every `ruleorder`, and every rule by name (the file
    that defines it, its `script:`, its `conda:` env relative to that file, its resources: a function by its name)."""
    import json

    return json.loads((shared_run("workflow-rules", _read_rules) / "rules.json").read_text())
