"""The ONNX embedder is the same model as the torch one: parity on real texts, shapes, norms."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tempr.providers.embedder.minilm import MiniLMEmbedder
from tempr.providers.embedder.onnx import KEPT_IN_FLOAT, OnnxMiniLMEmbedder, ensure_export

SAMPLE = Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"


@pytest.fixture(scope="module")
def cache_dir() -> Path:
    return Path(os.environ["TEMPR_MODEL_CACHE_DIR"])


@pytest.fixture(scope="module")
def texts() -> list[str]:
    facts = [json.loads(line)["text"] for line in SAMPLE.read_text().splitlines() if line.strip()]
    odd = ["a", "  leading and trailing spaces  ", "Ünïcödé façade, naïve café — 東京", "word " * 400]
    return facts + odd


def test_onnx_matches_torch_on_real_texts(cache_dir: Path, texts: list[str]) -> None:
    onnx = OnnxMiniLMEmbedder(cache_dir=cache_dir, batch_size=16).embed(texts)
    torch = MiniLMEmbedder(batch_size=16).embed(texts)
    assert onnx.shape == torch.shape == (len(texts), 384)
    cosine = (onnx * torch).sum(axis=1)
    assert cosine.min() >= 0.99, f"worst cosine {cosine.min():.4f} on {texts[int(cosine.argmin())][:60]!r}"
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-4)


def test_token_vectors_match_torchs_last_hidden_states(cache_dir: Path, texts: list[str]) -> None:
    """The exported graph's second output is the model's own token states: the same content tokens
    as sentence-transformers' ``token_embeddings``, each at cosine >= 0.999 (>= 0.95 for int8), and
    asking for them leaves the vectors as they were."""
    from tempr.core import token_match

    _, want = MiniLMEmbedder(batch_size=16).embed_tokens(texts)
    for variant, floor in (("exact", 0.999), ("int8", 0.95)):
        model = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=variant)
        vectors, got = model.embed_tokens(texts)
        assert np.array_equal(vectors, model.embed(texts))
        for a, b in zip(got, want, strict=True):
            mine, theirs = token_match.unpack(a), token_match.unpack(b)
            assert mine is not None and theirs is not None and mine.shape == theirs.shape
            assert np.einsum("ij,ij->i", mine, theirs).min() >= floor, variant
    assert model.embed_tokens(texts, tokens=False)[1] == [None] * len(texts)


def test_batching_does_not_change_vectors(cache_dir: Path, texts: list[str]) -> None:
    """Length-sorted batches pad differently; the mask must make that invisible."""
    model = OnnxMiniLMEmbedder(cache_dir=cache_dir, batch_size=7)
    together = model.embed(texts)
    alone = np.vstack([model.embed([t]) for t in texts[:10]])
    assert np.allclose(together[:10], alone, atol=1e-4)
    assert model.embed([]).shape == (0, 384)


def test_export_is_made_once(cache_dir: Path) -> None:
    path = ensure_export(cache_dir)
    stamp = path.stat().st_mtime_ns
    assert ensure_export(cache_dir) == path and path.stat().st_mtime_ns == stamp


def test_int8_variant_is_close_but_not_parity(cache_dir: Path, texts: list[str]) -> None:
    """The default int8 export (per-channel weights) stays close to the exact vectors: measured mean
    cosine 0.992, minimum 0.984 on 600 LoCoMo facts (per-tensor weights gave 0.965 / 0.931)."""
    exact = OnnxMiniLMEmbedder(cache_dir=cache_dir).embed(texts)
    model = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="int8")
    quantized = model.embed(texts)
    cosine = (exact * quantized).sum(axis=1)
    assert cosine.mean() >= 0.98 and cosine.min() >= 0.95
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-4)
    # one activation scale per batch: a text's vector moves slightly with its batch (README; 0.990
    # at worst measured on these texts)
    alone = np.vstack([model.embed([t]) for t in texts[:10]])
    assert (alone * quantized[:10]).sum(axis=1).min() >= 0.98
    assert np.array_equal(model.embed(texts), quantized)  # the same input, the same vectors


def test_mixed_int8_keeps_its_three_matmuls_in_float_and_moves_vectors_less(cache_dir: Path, texts: list[str]) -> None:
    """The mixed export's float MatMuls are named after the exported graph's nodes: an export that
    renamed them would silently quantise everything, so the names are checked in both graphs."""
    import onnx

    exact_graph = onnx.load(str(ensure_export(cache_dir))).graph
    mixed_graph = onnx.load(str(ensure_export(cache_dir, variant="int8-mixed"))).graph
    assert set(KEPT_IN_FLOAT) <= {n.name for n in exact_graph.node if n.op_type == "MatMul"}
    assert set(KEPT_IN_FLOAT) <= {n.name for n in mixed_graph.node if n.op_type == "MatMul"}
    assert sum(n.op_type == "MatMulInteger" for n in mixed_graph.node) == 36 - len(KEPT_IN_FLOAT)
    exact = OnnxMiniLMEmbedder(cache_dir=cache_dir).embed(texts)
    int8 = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="int8").embed(texts)
    mixed = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="int8-mixed")
    assert mixed.space != OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="int8").space
    vectors = mixed.embed(texts)
    assert (exact * vectors).sum(axis=1).mean() > (exact * int8).sum(axis=1).mean()
    assert (exact * vectors).sum(axis=1).min() >= 0.97
    # activations are quantised with one scale per batch, so a text's vector moves slightly with the
    # texts it is batched with: the price of the speed, kept small
    alone = np.vstack([mixed.embed([t]) for t in texts[:10]])
    assert (alone * vectors[:10]).sum(axis=1).min() >= 0.99


def _in_child(work: Callable[[], bytes]) -> bytes:
    """``work()``'s bytes, computed in a forked child (as a prefork worker's child would); a child that
    hangs is stopped after a minute, so the test fails instead of stalling the run."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            signal.alarm(60)
            os.write(write, work())
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.waitpid(pid, 0)
    return data


def test_a_forked_child_opens_its_own_session(cache_dir: Path, texts: list[str]) -> None:
    """What a prefork worker does: the parent builds the embedder and never embeds; each child's
    first embed opens a session of its own (ONNX Runtime's threads do not survive a fork)."""
    model = OnnxMiniLMEmbedder(cache_dir=cache_dir)
    assert model._session is None  # building it opened nothing
    data = _in_child(lambda: model.embed(texts[:5]).tobytes())
    assert model._session is None  # the child's session stayed in the child
    child = np.frombuffer(data, dtype=np.float32).reshape(5, 384)
    assert np.allclose(child, model.embed(texts[:5]), atol=1e-6)


def test_the_threads_setting_reaches_the_session_and_keeps_the_vectors(
    cache_dir: Path, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TEMPR_EMBEDDER_THREADS`` (what `services up` sets for the ingest pool) sizes the session's
    intra-op pool; the vectors are the same whatever the thread count."""
    from config.errors import ConfigError
    from config.settings import load_settings
    from tempr.endpoints import Endpoints
    from workers.resources import Resources

    monkeypatch.setenv("TEMPR_EMBEDDER_THREADS", "1")
    monkeypatch.setenv("TEMPR_EMBEDDER", "onnx")
    settings = load_settings().model_copy(update={"model_cache_dir": cache_dir})
    assert settings.embedder_threads == 1
    one = Resources(settings, Endpoints(None, None, None, None, None)).embedder
    assert isinstance(one, OnnxMiniLMEmbedder)
    vectors = one.embed(texts)
    assert one._session.get_session_options().intra_op_num_threads == 1
    default = OnnxMiniLMEmbedder(cache_dir=cache_dir)
    np.testing.assert_allclose(vectors, default.embed(texts), atol=1e-5)
    default.embed(texts[:1])  # one batch: the main session
    assert default._session.get_session_options().intra_op_num_threads == 0  # the runtime's own choice
    monkeypatch.setenv("TEMPR_EMBEDDER_THREADS", "-1")
    with pytest.raises(ConfigError):
        load_settings()


@pytest.mark.parametrize("variant", ["exact", "int8"])
def test_batches_side_by_side_give_the_same_bytes(cache_dir: Path, texts: list[str], variant: str) -> None:
    """A call of several batches runs them on threads (one intra-op thread each); one thread runs them
    one after another. Same batches, same maths: the vectors and packed token vectors are equal byte
    for byte (int8 quantises each batch's activations with one scale, so this also checks that every
    batch keeps its texts). A single batch, a query, still goes to the main session."""
    side = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=variant, batch_size=4, threads=2)
    alone = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=variant, batch_size=4, threads=1)
    got, got_tokens = side.embed_tokens(texts)
    want, want_tokens = alone.embed_tokens(texts)
    assert side._batch_session is not None and side._session is None  # the threads ran them
    assert alone._batch_session is None  # one thread: no pool, no second session
    assert np.array_equal(got, want)
    assert got_tokens == want_tokens
    assert np.array_equal(side.embed(texts[:3]), alone.embed(texts[:3]))
    assert side._session is not None


def test_a_child_of_a_parent_that_embedded_batches_keeps_its_session(cache_dir: Path, texts: list[str]) -> None:
    """A process that embedded batches on threads, then forked (a parent that warmed up): the child
    opens no session and starts no threads (neither survives a fork; a second session hung); it embeds
    on the inherited session, one batch after another, and gets the same vectors."""
    model = OnnxMiniLMEmbedder(cache_dir=cache_dir, batch_size=4, threads=2)
    want = model.embed(texts)
    assert model._batch_session is not None and model._session is None

    def child() -> bytes:
        vectors, single = model.embed(texts), model.embed(texts[:1])
        fresh = model._session is None and model._executor_in != os.getpid()
        return bytes([fresh]) + vectors.tobytes() + single.tobytes()

    data = _in_child(child)
    assert data[:1] == b"\x01", "the child opened a session or started threads of its own"
    child = np.frombuffer(data[1:], dtype=np.float32).reshape(len(texts) + 1, 384)
    assert np.array_equal(child[:-1], want)
    assert np.allclose(child[-1], want[0], atol=1e-6)


def test_building_a_quantised_export_leaves_the_root_logger_alone(cache_dir: Path, tmp_path: Path) -> None:
    """onnxruntime's quantiser logs through the root logger; in the process that asked for the export,
    that first use configured it (``logging.basicConfig``) before Celery set up the worker's log format,
    and the worker then wrote its job lines without ``job=`` (CI failed on a machine with no cached
    export). The build runs in a child process, so no handler appears here."""
    import logging
    import shutil

    exact = ensure_export(cache_dir)
    shutil.copy(exact, tmp_path / exact.name)  # only the quantisation runs (seconds, not the torch export)
    root = logging.getLogger()
    before = list(root.handlers)
    del root.handlers[:]  # as in a fresh worker: no handler yet (pytest's are put back below)
    try:
        built = ensure_export(tmp_path, variant="int8")
        assert built.exists() and root.handlers == []
    finally:
        root.handlers[:] = before


def test_a_quantised_build_never_writes_beside_the_shared_export(cache_dir: Path, tmp_path: Path) -> None:
    """onnxruntime's quantiser writes ``<model>-inferred.onnx`` beside the model it reads and deletes
    it after; processes building the export at once (the gateway and the workers of a first
    ``tempr services up``) deleted each other's file and one failed, leaving the gateway unable to
    analyse misses. Here that path is taken (as by another builder): the build must not touch it."""
    import shutil

    exact = ensure_export(cache_dir)
    shutil.copy(exact, tmp_path / exact.name)
    taken = tmp_path / f"{exact.stem}-inferred.onnx"
    taken.mkdir()  # another builder's file, as far as this one can tell
    built = ensure_export(tmp_path, variant="int8")
    assert built.exists() and taken.is_dir()
    made = {p.name for p in tmp_path.iterdir()} - {exact.name, built.name, taken.name, ".build.lock"}
    assert made == set()  # no file left beside the export


def test_a_process_that_finds_the_export_being_built_waits_and_builds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first ``tempr services up`` starts the gateway and every worker at once; they used to run
    the torch export side by side. One holds the build lock, the others wait and then use its file."""
    import fcntl
    import threading

    from tempr.providers.embedder import onnx

    builds: list[str] = []
    monkeypatch.setattr(onnx, "_in_child", lambda function, *args: builds.append(function))
    target = onnx.export_path(tmp_path)
    with (tmp_path / ".build.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process is building
        found: list[Path] = []
        waiter = threading.Thread(target=lambda: found.append(onnx.ensure_export(tmp_path)))
        waiter.start()
        waiter.join(timeout=1.0)
        assert waiter.is_alive() and not found  # waits for the lock
        target.write_bytes(b"built elsewhere")  # the other process's rename
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(timeout=10)
    assert found == [target] and builds == []
