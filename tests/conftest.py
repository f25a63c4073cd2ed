import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ORTLINT_NO_CACHE", "1")
# the policy kept between runs (orchestration/policy_cache.py): in a folder of this session, not the user's
os.environ.setdefault("ORTLINT_POLICY_CACHE", tempfile.mkdtemp(prefix="ortlint-policy-cache-"))
