"""ortlint: release-pairing static analysis for the ONNX Runtime C API, JNI and ORT Java code."""

__version__ = "0.1.0"
