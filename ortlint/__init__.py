"""ortlint: release-pairing static analysis for the ONNX Runtime C API, JNI and ORT Java code."""
from ._native import install as _use_compiled_modules

__version__ = "0.1.0"

_use_compiled_modules()
