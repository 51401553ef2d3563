"""Test-session set-up shared by all tiers.

The whole session uses its own state folder (its own embedded PostgreSQL,
Redis and workers on free ports), so it never touches a developer's
``.tempr`` or services that happen to run on the machine's default ports.
"""

from __future__ import annotations

import os
import tempfile
import warnings

_STATE = os.environ.get("TEMPR_TEST_STATE_DIR") or tempfile.mkdtemp(prefix="tempr-test-")
os.environ["TEMPR_STATE_DIR"] = _STATE
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
for var in ("TEMPR_DATABASE_URL", "TEMPR_REDIS_URL", "TEMPR_BROKER_URL", "TEMPR_RESULT_BACKEND", "TEMPR_CACHE_URL"):
    os.environ.pop(var, None)
warnings.filterwarnings("ignore", category=UserWarning, module="platformdirs")
