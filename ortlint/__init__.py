"""ortlint: release-pairing static analysis for the ONNX Runtime C API, JNI and ORT Java code."""

# The version, in this one place: packaging reads it (pyproject.toml), and so do the release tag
# (v + this), the README's pre-commit snippet, the CHANGELOG and action.yml (tests/test_release.py).
__version__ = "0.2.0"
